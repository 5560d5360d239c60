/** `backends[*]` (config §1.7, backends.md §1–5): a union discriminated by `type`. */
import * as z from 'zod';
import { DockerBackendSchema } from './backend-docker.js';
import { KubernetesBackendSchema } from './backend-kubernetes.js';
import { bool, intOrExpr, refineNodeFilters, str, strOrInt } from './common.js';
import { list, strictObject, strList } from './shapes.js';
import { typedUnion } from './typed-union.js';

/** Fields every backend type accepts. */
export const backendCommon = {
  name: str(),
  default: bool().optional(),
  /** a literal must be >= 0 (0 = CPU-only) */
  gpus_per_node: intOrExpr({ min: 0 }).nullable().optional(),
  include_nodes: strList('include_nodes').optional(),
  exclude_nodes: strList('exclude_nodes').optional(),
};

export const LocalBackendSchema = strictObject('local backend', {
  ...backendCommon,
  type: z.literal('local'),
  nodes: intOrExpr().optional(),
});

export const SlurmBackendSchema = strictObject('slurm backend', {
  ...backendCommon,
  type: z.literal('slurm'),
  account: str(),
  partition: str(),
  /** passed verbatim to salloc --time (a bare integer means minutes) */
  time: strOrInt(),
  nodes: intOrExpr({ min: 1 }),
  extra_args: list(str(), 'extra_args').optional(),
  job_name: str().optional(),
}).superRefine(refineNodeFilters);

export const BackendSchema = typedUnion('backend', [
  LocalBackendSchema,
  DockerBackendSchema,
  SlurmBackendSchema,
  KubernetesBackendSchema,
]);

export type LocalBackend = z.output<typeof LocalBackendSchema>;
export type SlurmBackend = z.output<typeof SlurmBackendSchema>;
export type { DockerBackend, DockerHost } from './backend-docker.js';
export type { KubernetesBackend } from './backend-kubernetes.js';
export type Backend = z.output<typeof BackendSchema>;
/** The recipe's `backends[].type` values: the union above is their one source. */
export type BackendType = Backend['type'];
/** Every backend type, in the union's order (read from its schemas, so it cannot drift from them). */
export const BACKEND_TYPES: readonly BackendType[] = BackendSchema.options.map((o) => o.shape.type.value);
