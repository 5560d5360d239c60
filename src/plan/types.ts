/**
 * The Plan: pure, serializable data describing exactly what a run will do. `--dry-run` renders it;
 * the runtime executes it. Nothing here holds functions, handles or class instances.
 */

export interface PlannedNode {
  name: string;
  ip: string;
  /** index in the backend allocation */
  index: number;
  numGpus: number | null;
  gpuUuids?: string[];
}

export type BackendType = 'local' | 'docker' | 'slurm' | 'kubernetes';
export type ReleaseAfter = 'workflow_completion' | 'task_ready' | 'task_completion';

export interface PlannedBackend {
  name: string;
  type: BackendType;
  isDefault: boolean;
  /** true when the nodes are dry-run placeholders (never contacted) */
  placeholder: boolean;
  nodes: PlannedNode[];
  /** backend fields after expression resolution (account, partition, image, hosts …) */
  config: Record<string, unknown>;
}

export interface PlannedOperator {
  /** named operator, or `default_<backend>` for the implicit one */
  name: string;
  type: string;
  /** operator fields after merging the task override and resolving expressions */
  config: Record<string, unknown>;
}

export type ProbeKind = 'tcp_port' | 'http_get' | 'http_post' | 'log_watch';

export interface PlannedProbe {
  role: 'readiness' | 'failure';
  kind: ProbeKind;
  /** tcp_port */
  port?: number;
  host?: string;
  onNode?: 'first' | 'each';
  /** hosts to check (tcp each / first) */
  hosts?: string[];
  /** http_* */
  url?: string;
  headers?: Record<string, string>;
  body?: string;
  /** http_*: statuses that count as up (default 200–399) */
  expectStatus?: number[];
  /** http_*: the body must contain this text (or match it with a `re:` prefix) */
  bodyMatch?: string;
  /** log_watch: literal, or `re:`/`regex:` prefixed regex */
  pattern?: string;
  /** log_watch: concrete task whose log is watched (own task when absent in the recipe) */
  logTask?: string;
  matchCount?: number;
  delayS: number;
  /** readiness: overall deadline in seconds (v0.3 semantics) */
  timeoutS: number;
  eachCheckTimeoutS: number;
  intervalS: number;
  successThreshold: number;
  failureThreshold: number;
}

export interface PlannedRetries {
  count: number;
  intervalS: number;
  backoff: number;
}

export interface PlannedResultPattern {
  name: string;
  regex: string;
  type: 'auto' | 'string' | 'int' | 'float' | 'bool' | 'json';
  unit?: string | null;
  aggregate: 'first' | 'last' | 'list' | 'count' | 'min' | 'max' | 'avg' | 'sum';
  required: boolean;
  group?: string | number;
}

export interface PlannedResult {
  patterns: PlannedResultPattern[];
  /** `result: {file: x.json}` relative to the task output dir */
  file?: string;
}

export interface PlannedOutputSpec {
  pattern: string;
  source: string;
}

export interface PlannedTask {
  /** concrete (replica-expanded) name */
  name: string;
  base: string;
  replicaIndex: number;
  replicaCount: number;
  policy: 'parallel' | 'sequential';
  /** sweep values of this replica, rendered (Python str) */
  sweep: Record<string, string>;
  backend: string;
  backendType: BackendType;
  operator: PlannedOperator;
  /** concrete names */
  dependsOn: string[];
  /** resolved script lines joined with \n (what the operator runs) */
  script: string;
  /** exact argv the backend launches (e.g. ['bash', '-c', script]) */
  argv: string[];
  /** environment entries sflow adds (the inherited environment is not included) */
  env: Record<string, string>;
  nodes: PlannedNode[];
  /** per-node GPU indices in CUDA_VISIBLE_DEVICES order; null when no GPUs were requested */
  gpus: number[] | null;
  resources: {
    nodes?: { indices?: number[]; count?: number; exclude?: number[]; releaseAfter?: ReleaseAfter };
    gpus?: { count?: number; indices?: number[]; releaseAfter?: ReleaseAfter };
  } | null;
  releaseAfter: { nodes: ReleaseAfter | 'placement_only'; gpus: ReleaseAfter | null };
  retries: PlannedRetries | null;
  probes: { readiness: PlannedProbe[]; failure: PlannedProbe[] };
  result: PlannedResult | null;
  outputs: PlannedOutputSpec[] | null;
  /** `uploads:` with `from`/`to` resolved (globs are expanded when the task completes) */
  uploads: PlannedUpload[] | null;
  monitor: unknown;
  failFast: boolean;
  outputDir: string;
  logPath: string;
}

/** A `storage:` target, fields resolved at assembly (artifacts-batch.md B1). */
export interface PlannedStorage {
  name: string;
  type: 's3';
  bucket: string;
  region?: string;
  /** key prefix, '' when none */
  prefix: string;
  endpointUrl?: string;
  addressingStyle?: 'auto' | 'virtual' | 'path';
  storageClass?: string;
}

/** One `uploads:` entry of a task (B1): `from` may still be a glob. */
export interface PlannedUpload {
  target: string;
  /** absolute local path or glob (relative paths resolve against the task output dir) */
  from: string;
  /** remote key below the prefix; undefined = the file's basename; trailing '/' = a directory */
  to?: string;
  onError: 'warn' | 'fail';
  /** replicas insert `_<task name>` before the extension unless `to` mentions task.name */
  renameForReplica: boolean;
  /** as written in the recipe (dry-run listing) */
  fromTemplate: string;
  toTemplate?: string;
}

/** `workflow.upload_all` (B3): the run directory zipped into one object. */
export interface PlannedUploadAll {
  target: string;
  /** key below the prefix (default `<run_id>.zip`) */
  to: string;
  toTemplate?: string;
  onError: 'warn' | 'fail';
}

export interface PlannedArtifact {
  name: string;
  uri: string;
  scheme: string;
  path: string;
  /** inline content for file:// artifacts (written before tasks start; never on dry-run) */
  content?: string;
}

export interface PlannedVariable {
  name: string;
  /** Python str() rendering, as exported to tasks */
  rendered: string;
  type: string;
  domain: string[] | null;
  scope: 'global' | 'workflow';
  description?: string;
}

export interface PlanPaths {
  workspaceDir: string;
  outputDir: string;
  /** `<outputDir>/<runId>` (dry-run: `<outputDir>/_dry_run/<workflow>`, never created) */
  runDir: string;
}

export interface Plan {
  workflow: string;
  runId: string;
  dryRun: boolean;
  paths: PlanPaths;
  variables: PlannedVariable[];
  backends: PlannedBackend[];
  artifacts: PlannedArtifact[];
  /** in declaration / replica-expansion order */
  tasks: PlannedTask[];
  /** topological order of concrete task names */
  order: string[];
  warnings: string[];
  storage: PlannedStorage[];
  uploadAll: PlannedUploadAll | null;
  workflowMonitor: unknown;
}
