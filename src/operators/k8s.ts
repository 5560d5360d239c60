/**
 * Kubernetes operators run the script inside the pod's container (`bash -lc <script>`); the pod
 * spec itself (image, resources, volumes) is built by the Kubernetes backend from the operator
 * config, which the plan keeps.
 */
import type { OperatorExtras, OperatorInput } from './types.js';

type K8sInput = OperatorInput<'k8s' | 'k8s_mpi'>;

export const k8sExtras = ({ config }: K8sInput): OperatorExtras => ({
  ...(config.image ? { image: String(config.image) } : {}),
  mounts: [],
  ...(config.working_dir ? { cwd: String(config.working_dir) } : {}),
});

/** the schema has no `command` field (operator-k8s.ts): the script always runs under `bash -lc` */
export const k8sArgv = ({ script }: K8sInput): string[] => ['bash', '-lc', script];
