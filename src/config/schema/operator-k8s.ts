/** `k8s` and `k8s_mpi` operators (backends.md §5.2). */
import * as z from 'zod';
import { boolOrExpr, intOrExpr, oneOf, scalarString, str, strOrInt, strOrNum } from './common.js';
import { list, record, strictObject, strList } from './shapes.js';

const raw = (what: string) => record(z.unknown(), what);

const EnvVarSchema = strictObject('env entry', {
  name: str({ nonEmpty: true }),
  value: scalarString().optional(),
  valueFrom: raw('valueFrom').optional(),
});

const K8S_KEY_HINTS = {
  namespace: "'namespace' belongs to the kubernetes backend, not to an operator",
};

export const k8sFields = {
  name: str(),
  image: str({ nonEmpty: true }),
  image_pull_secrets: z.union([str(), strList('image_pull_secrets')]).optional(),
  image_pull_policy: oneOf(['Always', 'IfNotPresent', 'Never'], { allowExpr: true }).optional(),
  service_account: str().optional(),
  run_as_root: boolOrExpr().optional(),
  shm_size: strOrInt().optional(),
  cpu: strOrNum().optional(),
  memory: strOrNum().optional(),
  cpu_limit: strOrNum().optional(),
  memory_limit: strOrNum().optional(),
  env: list(EnvVarSchema, 'env').optional(),
  restart: oneOf(['Never', 'OnFailure', 'Always'], { allowExpr: true }).optional(),
  host_network: boolOrExpr().optional(),
  node_selector: record(scalarString(), 'node_selector').optional(),
  tty: boolOrExpr().optional(),
  pass_envs: boolOrExpr().optional(),
  working_dir: str().optional(),
  security_context: raw('security_context').optional(),
  pod_security_context: raw('pod_security_context').optional(),
  ports: list(z.unknown(), 'ports').optional(),
  lifecycle: raw('lifecycle').optional(),
  runtime_class: str().optional(),
  priority_class: str().optional(),
  termination_grace_period: intOrExpr({ min: 0 }).optional(),
  labels: record(scalarString(), 'labels').optional(),
  annotations: record(scalarString(), 'annotations').optional(),
  container_overrides: raw('container_overrides').optional(),
  pod_overrides: raw('pod_overrides').optional(),
  device_class: str().optional(),
  device_selectors: strList('device_selectors').optional(),
  collect_max_file_size: strOrInt().optional(),
};

export const K8sOperatorSchema = strictObject(
  'k8s operator',
  { ...k8sFields, type: z.literal('k8s') },
  K8S_KEY_HINTS,
);

const MpiSchema = strictObject('k8s_mpi mpi block', {
  cpu_bind: oneOf(['core', 'numa', 'none'], { allowExpr: true }).optional(),
  cpu_bind_cores_per_rank: intOrExpr({ min: 0 }).optional(),
  route: oneOf(['auto', 'operator', 'pods'], { allowExpr: true }).optional(),
  slots_per_worker: intOrExpr({ min: 1 }).optional(),
  run_launcher_as_worker: boolOrExpr().optional(),
  launcher_creation_policy: oneOf(['WaitForWorkersReady', 'AtStartup'], { allowExpr: true }).optional(),
  ssh_port: intOrExpr({ min: 1, max: 65535 }).optional(),
  mpi_implementation: oneOf(['OpenMPI', 'Intel', 'MPICH'], { allowExpr: true }).optional(),
  ensure_sshd: boolOrExpr().optional(),
  forward_env_prefixes: strList('forward_env_prefixes').optional(),
  omp_num_threads: intOrExpr({ min: 0 }).nullable().optional(),
  worker_setup_timeout_seconds: intOrExpr({ min: 0 }).optional(),
  launcher_discovery_timeout: intOrExpr({ min: 0 }).optional(),
});

export const K8sMpiOperatorSchema = strictObject(
  'k8s_mpi operator',
  { ...k8sFields, type: z.literal('k8s_mpi'), mpi: MpiSchema.optional() },
  K8S_KEY_HINTS,
);

export type K8sOperator = z.output<typeof K8sOperatorSchema>;
export type K8sMpiOperator = z.output<typeof K8sMpiOperatorSchema>;
