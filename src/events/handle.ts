/**
 * The serializable handle of one launched task attempt (backend contract v2). It is plain,
 * versioned JSON: the runtime appends it to the run directory's handle ledger (`handles.jsonl`)
 * and carries it in `task_started` events, so a later process can find, follow or reap what a
 * dead driver left behind (`Backend.recover`). It lives with the events because both the event
 * stream and the ledger carry it; backends re-export it.
 */

export const HANDLE_VERSION = 2;

/** Where an attempt is, as its backend last reported it. */
export type HandleState = 'SUBMITTED' | 'RUNNING' | 'EXITED';

/** A process group on the driver's own machine (local backend). */
export interface ProcessRef {
  pid: number;
  pgid: number;
  /** hostname of the machine the group runs on (a recovering driver on another host must not signal it) */
  host: string;
  /** the leader's start time (clock ticks since boot), to tell a reused pid from ours */
  startTime?: number;
}

/**
 * The engine's own names of an attempt (Slurm's job and steps, Docker's containers and their
 * hosts, Kubernetes' namespace and pods), as plain JSON tagged with the backend type that wrote it.
 * This layer never reads its fields: each backend kind declares the type and zod schema of its
 * state (`src/backends/<kind>/handle-state.ts`) and narrows a handle's by parsing it there, the one
 * parse boundary; a state of another kind, or a malformed one, is refused with a clear error.
 */
export interface EngineState {
  /** the backend type whose kind wrote (and alone reads) the state */
  kind: string;
  [field: string]: unknown;
}

/**
 * What a version-1 ledger line carried instead of an engine state: the engine ids as that version
 * wrote them into `remoteIds` (`job.step`, `name@host`, `namespace/pod`). The ledger reader keeps
 * them here; only the kind's legacy parse (`fromV1` of its handle state) reads these strings.
 */
export interface V1EngineState extends EngineState {
  v1RemoteIds: string[];
}

export function isV1EngineState(e: unknown): e is V1EngineState {
  return (
    typeof e === 'object' &&
    e !== null &&
    'v1RemoteIds' in e &&
    Array.isArray(e.v1RemoteIds) &&
    e.v1RemoteIds.every((x) => typeof x === 'string')
  );
}

export interface TaskHandle {
  v: typeof HANDLE_VERSION;
  /** backend instance name (recipe `backends[].name`) and its type */
  backend: string;
  type: string;
  runId: string;
  task: string;
  attempt: number;
  state: HandleState;
  /** nodes the attempt was launched on (names) */
  nodes: string[];
  /** local process group, when the attempt is one */
  process?: ProcessRef;
  /**
   * The engine's names of the attempt, typed by its backend kind. Named `engine`, not `state`:
   * `state` above is where the attempt is (SUBMITTED/RUNNING/EXITED), this is what the engine calls
   * it. Some names arrive late (a Slurm step id): the backend reports the new state in a status
   * and the runtime records it in the ledger.
   */
  engine: EngineState;
  /**
   * Display labels of `engine` (`job.step`, `container@host`, `namespace/pod`), one per launched
   * member, derived by the kind from its state for events, summaries and people. Nothing parses
   * them: sflow reads engine names from `engine` only.
   */
  remoteIds: string[];
  /** GPUs the attempt actually got when a reservation registry assigned them */
  gpus?: { indices: number[]; uuids: string[] };
  /** ISO time of submission */
  submittedAt: string;
  /** the file the backend lands the attempt's output bytes in */
  logPath: string;
}

/** A stable key for maps of handles: `<backend>/<task>#<attempt>`. */
export function handleKey(h: Pick<TaskHandle, 'backend' | 'task' | 'attempt'>): string {
  return `${h.backend}/${h.task}#${h.attempt}`;
}
