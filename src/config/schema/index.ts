/**
 * The recipe schema (zod 4), one file per section. Input: a plain object parsed from YAML with
 * every named collection already in list form; `${{ }}` strings are still unevaluated.
 */
export { RecipeSchema, mergeOperatorOverride, type Recipe } from './recipe.js';
export {
  validateRecipe,
  validateOperatorOverride,
  overrideOperator,
  type ValidationResult,
} from './validate.js';
export { recipeJsonSchema } from './json-schema.js';
export { formatPath, toSchemaIssues, type SchemaIssue, type SchemaPath } from './issues.js';
export { isExpr, type Expr } from './common.js';

export type { Variable } from './variable.js';
export type { Artifact } from './artifact.js';
export {
  BACKEND_TYPES,
  type Backend,
  type LocalBackend,
  type DockerBackend,
  type DockerHost,
  type SlurmBackend,
  type KubernetesBackend,
} from './backends.js';
export {
  OPERATOR_TYPES,
  type OperatorType,
  type Operator,
  type BashOperator,
  type SrunOperator,
  type DockerRunOperator,
  type K8sOperator,
  type K8sMpiOperator,
  type PythonOperator,
  type SshOperator,
} from './operators.js';
export type { Workflow } from './workflow.js';
export type { Task } from './task.js';
export {
  RELEASE_AFTER,
  type ReleaseAfter,
  type Resources,
  type NodesRequest,
  type GpusRequest,
} from './resources.js';
export { REPLICA_POLICIES, type Replicas, type Retries } from './task-policies.js';
export { PROBE_DEFAULTS, PROBE_TYPES, type Probe, type Probes } from './probes.js';
export {
  RESULT_AGGREGATES,
  RESULT_TYPES,
  type ResultSpec,
  type ResultPattern,
  type Output,
} from './result.js';
export type { Upload, UploadAll, Storage } from './uploads.js';
export { MONITOR_DEFAULTS, MONITOR_SCOPES, type Monitor, type WorkflowMonitor } from './monitor.js';
