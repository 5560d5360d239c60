/**
 * Per-task runtime state of the orchestrator (runtime.md 6.2). PENDING is v0.2's INITIATED;
 * READY counts as settled (the workflow can finish) while its process keeps running.
 */
import type { Backend, TaskHandle } from '../backends/backend.js';
import type { PlannedTask } from '../plan/types.js';
import type { RunEvent, TaskStatus } from '../events/events.js';
import type { ProbeLoop } from '../probes/probe-driver.js';

export type FailKind =
  | 'exit'
  | 'failure_probe'
  | 'probe_limit'
  | 'not_ready_exit'
  | 'readiness_timeout'
  | 'launch'
  | 'lost'
  | FinalizeFailKind;

/** Exit 0, but finalisation fails the task: a result assertion, or an upload with `on_error: fail`. */
export type FinalizeFailKind = 'assertion' | 'upload';

/** What finalisation returns when the task must fail instead of completing. */
export interface FinalizeFailure {
  kind: FinalizeFailKind;
  reason: string;
}

export interface TaskRt {
  plan: PlannedTask;
  backend: Backend;
  status: TaskStatus;
  /** attempts launched so far (1-based number of the current/last attempt) */
  attempt: number;
  /** attempts made by earlier sessions of a resumed run: numbers continue after them */
  attemptBase: number;
  /** dependencies not yet COMPLETED or READY */
  unmet: number;
  dependents: TaskRt[];
  /** reached COMPLETED or READY once: its dependents were told */
  satisfied: boolean;
  /** submitted, launch call in progress */
  launching: boolean;
  handle?: TaskHandle;
  /** every attempt's handle: stray children of earlier attempts are stopped at teardown */
  handles: TaskHandle[];
  retryTimer?: NodeJS.Timeout;
  loops: ProbeLoop[];
  readyPassed: Set<number>;
  service: boolean;
  failKind?: FailKind;
  reason?: string;
  exitCode: number | null;
  signal: string | null;
  startedAt?: number;
  endedAt?: number;
  /** the current attempt's start / end as its engine reported them (ms since epoch) */
  engineStart?: number;
  engineEnd?: number;
}

export const isDone = (s: TaskStatus): boolean => s === 'COMPLETED' || s === 'FAILED' || s === 'CANCELLED';
/** terminal for "is the workflow finished" (v0.2 rule: READY counts) */
export const isSettled = (s: TaskStatus): boolean => isDone(s) || s === 'READY';

export function newTaskRt(plan: PlannedTask, backend: Backend): TaskRt {
  return {
    plan,
    backend,
    status: 'PENDING',
    attempt: 0,
    attemptBase: 0,
    unmet: 0,
    dependents: [],
    satisfied: false,
    launching: false,
    handles: [],
    loops: [],
    readyPassed: new Set(),
    service: plan.probes.readiness.length > 0,
    exitCode: null,
    signal: null,
  };
}

/** Wires dependency counters; unknown dependency names are a bug in the plan. */
export function linkTasks(tasks: Map<string, TaskRt>): void {
  for (const t of tasks.values()) {
    const deps = new Set(t.plan.dependsOn);
    for (const d of deps) {
      const dep = tasks.get(d);
      if (!dep) throw new Error(`plan: task '${t.plan.name}' depends on unknown task '${d}'`);
      dep.dependents.push(t);
      t.unmet++;
    }
  }
}

/** Runtime state for every planned task, dependencies wired; fills `byName`, returns plan order. */
export function buildTaskTable(
  plan: PlannedTask[],
  backends: Map<string, Backend>,
  byName: Map<string, TaskRt>,
): TaskRt[] {
  const order: TaskRt[] = [];
  for (const p of plan) {
    const backend = backends.get(p.backend);
    if (!backend) throw new Error(`no backend instance for '${p.backend}' (task '${p.name}')`);
    const t = newTaskRt(p, backend);
    byName.set(p.name, t);
    order.push(t);
  }
  linkTasks(byName);
  return order;
}

/** The environment without unset entries. */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** The `task_finished` event of a task (exit code and signal only when its process ended). */
export function finishedEvent(
  t: TaskRt,
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED',
  reason: string | undefined,
  withExit: boolean,
): Omit<Extract<RunEvent, { type: 'task_finished' }>, 't'> {
  return {
    type: 'task_finished',
    task: t.plan.name,
    attempt: t.attempt,
    status,
    exitCode: withExit ? t.exitCode : null,
    signal: withExit ? t.signal : null,
    ...(reason !== undefined ? { reason } : {}),
    // the engine's end of the attempt, when its process ended (not for a task still running)
    ...(t.engineEnd !== undefined ? { at: t.engineEnd } : {}),
  };
}
