/** `operators[*]` (config §1.8, backends.md §6): a union discriminated by `type`. */
import * as z from 'zod';
import { boolOrExpr, fail, intOrExpr, str, strOrInt } from './common.js';
import { strictObject, strList } from './shapes.js';
import { K8sMpiOperatorSchema, K8sOperatorSchema } from './operator-k8s.js';
import { typedUnion } from './typed-union.js';

export const BashOperatorSchema = strictObject('bash operator', {
  name: str(),
  type: z.literal('bash'),
});

/** Every field of the srun field → flag table (backends.md §6.3). */
export const SrunOperatorSchema = strictObject('srun operator', {
  name: str(),
  type: z.literal('srun'),
  job_id: strOrInt().optional(),
  partition: str().optional(),
  account: str().optional(),
  qos: str().optional(),
  reservation: str().optional(),
  time: strOrInt().optional(),
  constraint: str().optional(),
  exclusive: boolOrExpr().optional(),
  chdir: str().optional(),
  nodes: strOrInt().optional(),
  nodelist: strList('nodelist').optional(),
  ntasks: strOrInt().optional(),
  ntasks_per_node: strOrInt().optional(),
  cpus_per_task: strOrInt().optional(),
  gpus: strOrInt().optional(),
  gpus_per_task: strOrInt().optional(),
  gres: str().optional(),
  mem: strOrInt().optional(),
  mem_per_cpu: strOrInt().optional(),
  unbuffered: boolOrExpr().optional(),
  export: str().optional(),
  label: boolOrExpr().optional(),
  kill_on_bad_exit: boolOrExpr().optional(),
  overlap: boolOrExpr().optional(),
  wait: strOrInt().optional(),
  mpi: str().optional(),
  container_image: str().optional(),
  container_name: str().optional(),
  container_mount_home: boolOrExpr().optional(),
  container_writable: boolOrExpr().optional(),
  container_mounts: strList('container_mounts').optional(),
  container_workdir: str().optional(),
  container_remap_root: boolOrExpr().optional(),
  extra_args: strList('extra_args').optional(),
}).superRefine((o, ctx) => {
  if (o.container_image != null && o.container_name != null)
    fail(
      ctx,
      ['container_name'],
      `srun operator '${o.name}': 'container_image' and 'container_name' cannot both be set`,
      "name a container with 'container_name' and pass its image via extra_args (--container-image=…), or use 'container_image' alone",
    );
});

export const DockerRunOperatorSchema = strictObject('docker_run operator', {
  name: str(),
  type: z.literal('docker_run'),
  /** defaults to the docker backend's image */
  image: str().optional(),
  workdir: str().optional(),
  mounts: strList('mounts').optional(),
  gpus: strOrInt().optional(),
  pass_envs: boolOrExpr().optional(),
  extra_args: strList('extra_args').optional(),
  auto_mount_runtime_dirs: boolOrExpr().optional(),
  log_to_file: boolOrExpr().optional(),
});

export const PythonOperatorSchema = strictObject('python operator', {
  name: str(),
  type: z.literal('python'),
  python_exec: str().optional(),
  extra_args: strList('extra_args').optional(),
});

export const SshOperatorSchema = strictObject('ssh operator', {
  name: str(),
  type: z.literal('ssh'),
  host: str({ nonEmpty: true }),
  user: str().optional(),
  port: intOrExpr({ min: 1, max: 65535 }).optional(),
  identity_file: str().optional(),
  extra_args: strList('extra_args').optional(),
});

const OPERATOR_OPTIONS = [
  BashOperatorSchema,
  SrunOperatorSchema,
  DockerRunOperatorSchema,
  K8sOperatorSchema,
  K8sMpiOperatorSchema,
  PythonOperatorSchema,
  SshOperatorSchema,
] as const;

export const OperatorSchema = typedUnion('operator', OPERATOR_OPTIONS, {
  docker: {
    message: "Operator type 'docker' is not valid; use `type: docker_run` for the Docker launch operator",
    hint: 'the Docker *backend* is `type: docker`, but its operator is `type: docker_run`',
  },
});

export const OPERATOR_TYPES = ['bash', 'srun', 'docker_run', 'k8s', 'k8s_mpi', 'python', 'ssh'] as const;
export type OperatorType = (typeof OPERATOR_TYPES)[number];
/** One of the operator types (a type name read from a recipe). */
export function isOperatorType(t: unknown): t is OperatorType {
  return OPERATOR_TYPES.some((x) => x === t);
}

/** Schema of one operator type, for override checks. */
export const OPERATOR_SCHEMAS: Record<OperatorType, (typeof OPERATOR_OPTIONS)[number]> = {
  bash: BashOperatorSchema,
  srun: SrunOperatorSchema,
  docker_run: DockerRunOperatorSchema,
  k8s: K8sOperatorSchema,
  k8s_mpi: K8sMpiOperatorSchema,
  python: PythonOperatorSchema,
  ssh: SshOperatorSchema,
};

export type BashOperator = z.output<typeof BashOperatorSchema>;
export type SrunOperator = z.output<typeof SrunOperatorSchema>;
export type DockerRunOperator = z.output<typeof DockerRunOperatorSchema>;
export type PythonOperator = z.output<typeof PythonOperatorSchema>;
export type SshOperator = z.output<typeof SshOperatorSchema>;
export type { K8sMpiOperator, K8sOperator } from './operator-k8s.js';
export type Operator = z.output<typeof OperatorSchema>;
