/**
 * The serializable handle of one launched task attempt (backend contract v2). It is plain,
 * versioned JSON: the runtime appends it to the run directory's handle ledger (`handles.jsonl`)
 * and carries it in `task_started` events, so a later process can find, follow or reap what a
 * dead driver left behind (`Backend.recover`). It lives with the events because both the event
 * stream and the ledger carry it; backends re-export it.
 */

export const HANDLE_VERSION = 1;

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
   * Engine ids (Slurm `job.step`, container ids, pod names), one per launched member. Empty until
   * the engine names the attempt: a backend fills it in when the ids arrive and the runtime records
   * the update in the ledger.
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
