/**
 * The operator settings the Kubernetes backend builds pods from: a `k8s` or `k8s_mpi` operator's
 * (src/config/schema/operator-k8s.ts), as the plan typed them. The plan refuses any other operator
 * on this backend (merge-groups.ts), so a task that reaches a pod builder carries one of these.
 */
import type { OperatorConfig } from '../../operators/index.js';
import type { PlannedOperator } from '../../plan/types.js';

export type K8sOperatorConfig = OperatorConfig<'k8s' | 'k8s_mpi'>;

/** the `mpi:` block of a `k8s_mpi` operator (absent on `k8s`) */
export type K8sMpiBlock = NonNullable<OperatorConfig<'k8s_mpi'>['mpi']>;

/** the settings of a task's Kubernetes operator; any other operator here is a bug of the plan */
export function k8sOperatorConfig(op: PlannedOperator): K8sOperatorConfig {
  if (op.type === 'k8s' || op.type === 'k8s_mpi') return op.config;
  throw new Error(`operator '${op.name}' (${op.type}) on the Kubernetes backend: the plan refuses it`);
}
