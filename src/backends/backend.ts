/**
 * The backend contract, version 2 (docs/adding-a-backend.md). Shaped on Nomad's task drivers and
 * Snakemake's executor plugins: a flat list of verbs, capabilities as a plain struct, a
 * serializable handle, batched status and stop. Every verb takes an AbortSignal and is bounded
 * by the backend (a timed-out engine call rejects; the runtime retries status on the next tick).
 *
 * One run session calls them in this order on the same instance:
 *   preflight → allocate → (plan on the reported topology) → launch… / poll|watch / stop… → release
 *
 * Output rule: a backend lands each attempt's output bytes in `task.logPath`, in order, as they
 * arrive (a process writing straight into it, `srun` stdout, `docker logs -f`, the Kubernetes log
 * stream). Tailing, log_watch probes and result parsing read only that file.
 */
import type { EngineState, HandleState, TaskHandle } from '../events/handle.js';
import type { NodeLaunchSpec } from '../operators/launch-spec.js';
import type { ProbeTransport } from '../probes/types.js';
import type { CliOptionBag } from '../util/cli-options.js';
import type {
  BackendCapabilities,
  BackendType,
  PlannedArtifact,
  PlannedNode,
  PlannedTask,
} from '../plan/types.js';

export type { BackendCapabilities, EngineState, HandleState, NodeLaunchSpec, TaskHandle };
export { HANDLE_VERSION, handleKey } from '../events/handle.js';

export interface ExitStatus {
  /** exit code of the attempt (a multi-member attempt: its leader / first failing member); null when killed */
  code: number | null;
  signal: string | null;
}

/** What `allocate` reports: the topology the plan places on. */
export interface Allocation {
  /** engine allocation id (Slurm job id, `local`, a reservation id) */
  id: string;
  nodes: PlannedNode[];
  /** sflow created it, so `release` gives it back (an inherited Slurm job is not owned) */
  owned: boolean;
}

/** Progress while `allocate` waits (queued Slurm job, unschedulable pods, GPUs held elsewhere). */
export type AllocationProgress = (message: string) => void;

export interface LaunchRequest {
  task: PlannedTask;
  attempt: number;
  /** one launch spec per node from the operator (a single spec when one command spans every node) */
  specs: NodeLaunchSpec[];
  /** the inherited environment of the driver; each spec's `env` goes over it */
  baseEnv: Record<string, string>;
  /** driver-side working directory (where sflow was started) */
  cwd: string;
  runDir: string;
  /**
   * Record the handle in the run's ledger. A backend calls it as soon as the engine accepted the
   * submission (before waiting for anything else) and again whenever the handle changes (remote
   * ids arrived): a driver killed at any point leaves a ledger that `recover` can act on.
   */
  record(handle: TaskHandle): void;
}

/** Status of one handle in a batched `poll`. */
export interface HandleStatus {
  state: HandleState;
  /** set when state is EXITED */
  exit?: ExitStatus;
  /**
   * The engine named the attempt (or more of it) since the handle was recorded (a Slurm step id):
   * the handle's new engine state with its labels (`engineFields`); the runtime applies it to the
   * handle and records it in the ledger.
   */
  named?: Pick<TaskHandle, 'engine' | 'remoteIds'>;
  /** the engine reports the attempt failed without an exit code (image pull, launch after submit) */
  error?: string;
  /**
   * When the engine says the attempt started / ended (ms since epoch, the engine's clock): Docker's
   * State.StartedAt/FinishedAt, a Slurm step's own start stamp and its srun's end, a Kubernetes
   * container's startedAt/finishedAt, a local process's start and exit. Absent when unknown.
   */
  startedAt?: number;
  endedAt?: number;
}

/** Per-handle result of a batched `stop`. */
export interface StopOutcome {
  /** signals / engine actions actually sent, in order (`SIGTERM`, `SIGKILL`, `scancel`, …) */
  signals: string[];
  /** nothing of the attempt runs any more */
  gone: boolean;
  /** nothing ran when the stop began */
  alreadyGone: boolean;
  elapsedMs: number;
  error?: string;
}

export interface StopOptions {
  /** how long the attempt may take to end after the graceful request */
  graceMs: number;
  /** skip the grace: kill at once (second Ctrl-C, deadline passed) */
  force?: boolean;
}

export interface Inspection {
  alive: boolean;
  state: HandleState | 'UNKNOWN';
  exit?: ExitStatus;
  /** where it runs (node names / hosts), as the engine says */
  where?: string[];
}

export interface RecoverOutcome {
  /** something of the attempt was still running when recover began */
  found: boolean;
  stop?: StopOutcome;
  detail: string;
}

/** Push-style status: the backend calls `onStatus` when an attempt's state changes. */
export interface WatchHooks {
  onStatus(handle: TaskHandle, status: HandleStatus): void;
}

export interface Backend {
  readonly name: string;
  readonly type: BackendType;
  capabilities(): BackendCapabilities;
  /** tools, hosts, credentials checked at once; every problem in one SflowError (phase 'preflight') */
  preflight(signal: AbortSignal): Promise<void>;
  /** cancellable while queued; reports progress while it waits; returns the topology */
  allocate(signal: AbortSignal, progress: AllocationProgress): Promise<Allocation>;
  /** submits one attempt; resolves with a handle in state SUBMITTED or RUNNING */
  launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle>;
  /** one batched status call for every live handle of this backend (one per tick, never one per task) */
  poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>>;
  /**
   * Optional push alternative to `poll` (local processes report their exit as it happens). The
   * backend keeps reporting for handles added later through `launch`; the signal ends the watch.
   */
  watch?(hooks: WatchHooks, signal: AbortSignal): void;
  /** batched stop: graceful request, grace, force; resolves with one outcome per handle key */
  stop(handles: TaskHandle[], opts: StopOptions, signal: AbortSignal): Promise<Map<string, StopOutcome>>;
  /** async truth about one handle (alive, where, exit) */
  inspect(handle: TaskHandle, signal: AbortSignal): Promise<Inspection>;
  /** a handle from a ledger written by a driver that died: still alive? stop it */
  recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome>;
  /**
   * Give resources back: the named nodes (`release_after`), or everything when `nodes` is absent.
   * Idempotent: releasing twice, or releasing what was never allocated, is not an error.
   */
  release(signal: AbortSignal, nodes?: string[]): Promise<void>;
  /**
   * A task reached READY: resources it holds with `release_after: task_ready` may go to later
   * tasks. Bounded by the caller: give up when the signal aborts (the run stops, or the call took
   * too long); a rejection is reported as a warning, the task stays READY.
   */
  taskReady?(handle: TaskHandle, signal: AbortSignal): Promise<void>;
  /**
   * Where tcp/http probes of its tasks run when the driver cannot reach them directly
   * (`capabilities.probesFrom: 'cluster'`: Kubernetes' probe pod); undefined: from the driver.
   */
  probeTransport?(): ProbeTransport | undefined;
}

/** What a backend instance gets when the registry creates it. */
export interface BackendContext {
  runId: string;
  runDir: string;
  /**
   * driver-side messages: the console shows them. `warning` (the default) for a problem the user
   * should see; `info` for a routine step worth recording (outputs collected, leftovers of dead
   * drivers removed, progress of a long wait).
   */
  log(message: string, level?: 'info' | 'warning'): void;
  /** CLI settings of this backend type (`--wait-for-gpus`, …), by option name */
  options: CliOptionBag;
  env: NodeJS.ProcessEnv;
  /** some task of this run on this backend requests GPUs (a backend may skip GPU discovery otherwise) */
  gpuTasks: boolean;
  /**
   * the run's artifacts (a backend whose tasks do not see the driver's filesystem ships the
   * `file://` ones: Kubernetes ConfigMaps)
   */
  artifacts?: PlannedArtifact[];
  /** TERM → KILL grace of the run (stops, and a lifeline's clean-up when the driver dies); default 5 s */
  graceMs?: number;
}
