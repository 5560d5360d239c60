/**
 * Per-task runtime state of the orchestrator (runtime.md 6.2). PENDING is v0.2's INITIATED;
 * READY counts as settled (the workflow can finish) while its process keeps running.
 */
import type { Backend, TaskHandle } from '../backends/backend.js';
import type { PlannedTask } from '../plan/types.js';
import type { TaskStatus } from './events.js';
import type { ProbeLoop } from './probe-driver.js';

export type FailKind = 'exit' | 'failure_probe' | 'not_ready_exit' | 'readiness_timeout' | 'launch';

export interface TaskRt {
  plan: PlannedTask;
  backend: Backend;
  status: TaskStatus;
  /** attempts launched so far (1-based number of the current/last attempt) */
  attempt: number;
  /** dependencies not yet COMPLETED or READY */
  unmet: number;
  dependents: TaskRt[];
  /** reached COMPLETED or READY once: its dependents were told */
  satisfied: boolean;
  /** submitted, launch in progress */
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
