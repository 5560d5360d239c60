import type { Backend as BackendEntry, BackendType } from '../config/schema/backends.js';
import type { Monitor, WorkflowMonitor } from '../config/schema/monitor.js';
import type { Resolved } from '../config/resolve.js';
import type { NativeValue } from '../config/expr/index.js';
import type { NodeLaunchSpec } from '../operators/launch-spec.js';
import type { OperatorConfig, OperatorType } from '../operators/types.js';
import type { PlannedProbe } from '../probes/registry.js';

/** a recipe backend type (its one source: the BackendSchema union, src/config/schema/backends.ts) */
export type { BackendType, NodeLaunchSpec };
/** A planned probe: the common fields and its kind's own (src/probes/registry.ts, one module per kind). */
export type { PlannedProbe, ProbeKindName as ProbeKind } from '../probes/registry.js';

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
  /** the engine allocation the node belongs to (a Slurm job id), when the backend has one */
  allocation?: string;
  /** `[user@]address` the driver reaches the node at over ssh (Docker pool hosts: node-side helpers) */
  sshDestination?: string;
}

export type ReleaseAfter = 'workflow_completion' | 'task_ready' | 'task_completion';

/**
 * The operator types a backend may default to: those whose settings have no required field, so
 * the implicit operator (no `operators[]` entry) is complete with none.
 */
export type DefaultOperatorType = 'bash' | 'srun' | 'docker_run' | 'python';

/**
 * What a backend type can do, as a plain struct the planner and the runtime read (backends.md
 * §1.6). Declared here because the plan reads it; each backend's registry entry fills it in.
 */
export interface BackendCapabilities {
  /** the backend as messages name it (`local`, `Kubernetes`) */
  label: string;
  /** operator type for tasks that name none; null = every task must name one */
  defaultOperator: DefaultOperatorType | null;
  /** `resources.gpus.indices` can be honoured (false: the engine assigns devices, count only) */
  gpuIndices: boolean;
  /** GPUs can be handed to later tasks at `release_after: task_ready` */
  gpuReleaseOnReady: boolean;
  /** tasks claim physical GPUs in the cross-process reservation registry */
  gpuReservationRegistry: boolean;
  /** `monitor:` blocks are sampled */
  monitor: boolean;
  /** `sflow batch` can submit the whole run */
  batch: boolean;
  /** where tcp/http probes run from */
  probesFrom: 'driver' | 'cluster';
  /** task `fail_fast` default */
  failFastDefault: boolean;
  /** status ticks of a backend without `watch` */
  pollIntervalMs: number;
  /** its nodes are stand-ins for this machine (local): nothing to probe for a topology */
  syntheticNodes: boolean;
  /**
   * it removes the containers of its `docker_run` tasks itself, once it has read their exit
   * (Docker); false: the operator starts them with `--rm`
   */
  removesContainers: boolean;
  /**
   * ids of the rows of the not-yet table (src/plan/not-yet.ts) about fields of this type's recipe
   * entry that this version plans but does not do; empty when it does them all
   */
  notYet: readonly string[];
}

/** The nodes a backend plans on before (or without) allocation, and whether they are placeholders. */
export interface PlaceholderTopology {
  nodes: PlannedNode[];
  /** true: dry-run stand-ins never contacted; false: what allocation will report (local) */
  placeholder: boolean;
}

/** Located errors and integer fields for a backend's placeholder function. */
export interface PlaceholderTools {
  /** throws a plan error located at `path` under the backend's entry */
  fail(path: Array<string | number>, code: string, message: string, hint?: string): never;
  /** resolves `${{ }}` to an integer (located errors) */
  int(value: unknown, path: Array<string | number>, label: string): number;
}

export type { Resolved };

/** the `backends[]` entry of one type after expression resolution (its schema's type, resolved) */
export type BackendConfig<T extends BackendType = BackendType> = Resolved<Extract<BackendEntry, { type: T }>>;

export interface PlaceholderInput<T extends BackendType = BackendType> {
  name: string;
  /** the backend entry after expression resolution (`nodes`, `gpus_per_node` as numbers when set) */
  config: BackendConfig<T>;
  nodes: number | null;
  gpusPerNode: number | null;
}

/** What a backend's plan refinement sees: its backend and tasks once every task is placed. */
export interface RefineInput<T extends BackendType = BackendType> {
  /** the plan's run id (engine object names derive from it) */
  runId: string;
  backend: PlannedBackend<T>;
  /** the tasks on this backend, in plan order (mutable: a backend may annotate them) */
  tasks: PlannedTask[];
  /** every task of the plan */
  all: PlannedTask[];
}

export interface RefineTools {
  /** throws a plan error located at `field` (e.g. ['depends_on']) of the task's declaration */
  fail(task: string, field: Array<string | number>, code: string, message: string, hint?: string): never;
  /** a plan warning (dry-run lists it; a run prints it) */
  warn(message: string): void;
}

/**
 * What the planner needs from a backend type: read from the registry, handed in by the CLI. `T`:
 * the type whose settings its functions read (the registry pairs each type with its own kind).
 */
export interface BackendTraits<T extends BackendType = BackendType> {
  capabilities: BackendCapabilities;
  placeholder(this: void, input: PlaceholderInput<T>, tools: PlaceholderTools): PlaceholderTopology;
  /**
   * what allocating will run (Slurm: the exact `salloc` argv), or a sentence saying what is
   * reused instead; `--dry-run` shows it. Absent: allocation runs no command.
   */
  allocationCommand?(
    this: void,
    input: PlaceholderInput<T> & { workflow: string },
  ): string[] | string | undefined;
  /**
   * Backend-specific checks and additions once every task is placed, on the trial plan and again
   * on the allocated topology (Kubernetes: merged pods and their gates).
   */
  refine?(this: void, input: RefineInput<T>, tools: RefineTools): void;
}

/** Backend type → its traits (the registry); undefined for a type nothing registered. */
export type BackendCatalog = (type: string) => BackendTraits | undefined;

/** A planned backend of one type: `config` is that type's recipe entry, resolved. */
export interface PlannedBackendOf<T extends BackendType> {
  name: string;
  type: T;
  isDefault: boolean;
  /** true when the nodes are dry-run placeholders (never contacted) */
  placeholder: boolean;
  nodes: PlannedNode[];
  /** backend fields after expression resolution (account, partition, image, hosts …) */
  config: BackendConfig<T>;
  capabilities: BackendCapabilities;
  /** the command allocation runs (Slurm `salloc …`), or a sentence saying none runs; dry-run prints it */
  allocateCommand?: string[] | string;
  /** lines the dry-run shows under the backend (set by the backend's plan refinement) */
  notes?: string[];
}

/** A planned backend: a union discriminated by `type` (narrow it to read a type's `config`). */
export type PlannedBackend<T extends BackendType = BackendType> = { [K in T]: PlannedBackendOf<K> }[T];

/** A planned operator of one type: `config` is that type's settings (src/operators/types.ts). */
export interface PlannedOperatorOf<T extends OperatorType> {
  /** named operator, or `default_<backend>` for the implicit one */
  name: string;
  type: T;
  /** operator fields after merging the task override and resolving expressions */
  config: OperatorConfig<T>;
}

/** A planned operator: a union discriminated by `type` (narrow it to read a type's `config`). */
export type PlannedOperator<T extends OperatorType = OperatorType> = { [K in T]: PlannedOperatorOf<K> }[T];

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

export interface PlannedAssertion {
  /** the expression as written, `\${{ … }}` included */
  source: string;
  /** `file:line:col` of the entry in the recipe */
  location: string;
  /** plain values of the names it reads besides `result` (variables, this replica's sweep values) */
  bindings: { [name: string]: NativeValue };
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
  /** sweep values of this replica, rendered (Python str); a secret's is `secret<k>` (its domain index) */
  sweep: Record<string, string>;
  backend: string;
  backendType: BackendType;
  operator: PlannedOperator;
  /** concrete names */
  dependsOn: string[];
  /** resolved script lines joined with \n (what the operator runs) */
  script: string;
  /**
   * the file the script is written to when it is too large for one argument (the run writes it
   * before any task starts; the command runs it); absent otherwise
   */
  scriptFile?: string;
  /** exact argv the backend launches (e.g. ['bash', '-c', script]): the first launch spec's */
  argv: string[];
  /** environment entries sflow adds (the inherited environment is not included); node 0's */
  env: Record<string, string>;
  /** the operator's launch specs: one per node for per-node operators, else one */
  launch: NodeLaunchSpec[];
  nodes: PlannedNode[];
  /** per-node GPU indices in CUDA_VISIBLE_DEVICES order; null when no GPUs were requested */
  gpus: number[] | null;
  /** Kubernetes: the GPU slots placement counted on each node (the device plugin picks the devices) */
  gpuSlots?: number[];
  /**
   * Set by a backend's refinement: what the engine will call the task's first attempt, where the
   * command line does not say it (Kubernetes: its pods); `--dry-run` prints it.
   */
  engineNames?: { what: string; names: string[] };
  /**
   * Set by a backend's refinement: the task runs as a member of a pod shared with other tasks on
   * its node (Kubernetes merge-pod). `gatedOn`: the members it waits for inside the pod.
   */
  colocated?: {
    group: string;
    members: string[];
    gatedOn: string[];
    /** every member's launch spec, in `members` order (the first launch builds the shared pod) */
    launch: NodeLaunchSpec[];
    /** GPUs of the shared pod (the union of the members') */
    gpus: number;
  };
  resources: {
    nodes?: { indices?: number[]; count?: number; exclude?: number[]; releaseAfter?: ReleaseAfter };
    gpus?: { count?: number; indices?: number[]; releaseAfter?: ReleaseAfter };
  } | null;
  releaseAfter: { nodes: ReleaseAfter | 'placement_only'; gpus: ReleaseAfter | null };
  retries: PlannedRetries | null;
  probes: { readiness: PlannedProbe[]; failure: PlannedProbe[] };
  result: PlannedResult | null;
  /** `assert:` expressions, checked after result parsing */
  asserts?: PlannedAssertion[];
  outputs: PlannedOutputSpec[] | null;
  /** `uploads:` with `from`/`to` resolved (globs are expanded when the task completes) */
  uploads: PlannedUpload[] | null;
  monitor: Monitor | null;
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
  /** files reached through a link out of the folder `from` names are uploaded too (`follow_symlinks`) */
  followSymlinks?: true;
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
  /** a secret variable (config/secret-variables.ts): its value is masked wherever sflow shows it */
  secret?: true;
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
  workflowMonitor: WorkflowMonitor | null;
  /** workflow.timeout in seconds: the run is stopped when it passes (absent/null: no limit) */
  workflowTimeoutS?: number | null;
}
