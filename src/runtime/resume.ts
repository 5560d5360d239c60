/**
 * What `sflow run --resume <run dir>` runs again, decided from the run's ledger (`events.jsonl`)
 * alone: every task whose last state is not COMPLETED (FAILED, CANCELLED, never started, or left
 * running by a killed driver), everything that depends on one of them, and every service such a
 * task depends on (a service's process ended with its session: a dependent that runs again needs it
 * up again, so it runs again too; its other, completed dependents are still reused). Everything
 * else is reused: pre-settled as COMPLETED, its outputs and results stand. Pure: no files.
 */
import { hostname } from 'node:os';
import type { DriverInfo, RunEvent, TaskStatus } from '../events/events.js';
import { isProcessAlive } from '../util/process-liveness.js';
import type { ResumeTasks } from './orchestrator-types.js';

/** A task as the earlier sessions left it. */
export interface EarlierTask {
  status: TaskStatus;
  /** the highest attempt number used so far (0: never submitted) */
  attempts: number;
  /** the attempt that reached the last status */
  lastAttempt: number;
}

/** The earlier sessions of a run, folded from its ledger. */
export interface EarlierRun {
  workflow: string;
  runId: string;
  /** sessions so far (1 for a run never resumed) */
  sessions: number;
  /** the last session wrote run_finished */
  finished: boolean;
  /** its verdict, when finished */
  status?: string;
  /** the last session's driver, when recorded */
  driver?: DriverInfo;
  /** when the last session started (ms epoch) */
  startedAt?: number;
  tasks: Map<string, EarlierTask>;
}

export function foldEarlierRun(events: Iterable<RunEvent>): EarlierRun {
  const run: EarlierRun = { workflow: '', runId: '', sessions: 0, finished: false, tasks: new Map() };
  const task = (name: string): EarlierTask => {
    let t = run.tasks.get(name);
    if (!t) run.tasks.set(name, (t = { status: 'PENDING', attempts: 0, lastAttempt: 0 }));
    return t;
  };
  const set = (name: string, status: TaskStatus, attempt: number) => {
    const t = task(name);
    t.status = status;
    t.attempts = Math.max(t.attempts, attempt);
    t.lastAttempt = attempt;
  };
  for (const e of events) {
    switch (e.type) {
      case 'run_started':
        run.workflow = e.workflow;
        run.runId = e.runId;
        run.sessions++;
        run.finished = false;
        run.status = undefined;
        run.driver = e.driver;
        run.startedAt = e.t;
        for (const n of e.tasks) task(n);
        break;
      case 'task_submitted':
        set(e.task, 'SUBMITTED', e.attempt);
        break;
      case 'task_started':
        set(e.task, 'RUNNING', e.attempt);
        break;
      case 'task_ready':
        set(e.task, 'READY', e.attempt);
        break;
      case 'task_retry':
        set(e.task, 'PENDING', e.attempt);
        break;
      case 'task_finished':
        set(e.task, e.status, e.attempt);
        break;
      case 'task_reused':
        set(e.task, 'COMPLETED', e.attempt);
        break;
      case 'run_finished':
        run.finished = true;
        run.status = e.status;
        break;
      default:
        break;
    }
  }
  return run;
}

/** The shape of a planned task that the decision needs. */
export interface ResumeTaskShape {
  name: string;
  dependsOn: string[];
  /** has a readiness probe */
  service: boolean;
}

export interface ResumePlan extends ResumeTasks {
  /** tasks that run again, in plan order, each with why */
  rerun: Array<{ task: string; why: string }>;
  /** the number of the new session */
  session: number;
}

export function planResume(tasks: ResumeTaskShape[], earlier: EarlierRun): ResumePlan {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const dependents = new Map<string, string[]>();
  for (const t of tasks)
    for (const d of new Set(t.dependsOn)) dependents.set(d, [...(dependents.get(d) ?? []), t.name]);
  const why = new Map<string, string>();
  const done = (s: TaskStatus | undefined) => s === 'COMPLETED' || s === 'READY';
  for (const t of tasks) {
    const e = earlier.tasks.get(t.name);
    if (!e) why.set(t.name, 'not in the earlier run');
    else if (!done(e.status))
      why.set(
        t.name,
        e.attempts === 0 ? 'never started' : `${describe(e.status)} (attempt ${e.lastAttempt})`,
      );
  }
  // everything downstream of a task that runs again runs again
  const queue = [...why.keys()];
  while (queue.length) {
    const n = queue.shift()!;
    for (const d of dependents.get(n) ?? []) {
      if (why.has(d)) continue;
      why.set(d, `depends on ${n}`);
      queue.push(d);
    }
  }
  // a service a re-run task needs is up again for it (its own completed dependents stay reused)
  const upstream = [...why.keys()];
  while (upstream.length) {
    const n = upstream.shift()!;
    for (const d of byName.get(n)?.dependsOn ?? []) {
      if (why.has(d) || !byName.get(d)?.service) continue;
      why.set(d, `service needed by ${n}`);
      upstream.push(d);
    }
  }
  const reused = new Map<string, { attempt: number; status: 'COMPLETED' | 'READY' }>();
  const attempts = new Map<string, number>();
  const rerun: Array<{ task: string; why: string }> = [];
  for (const t of tasks) {
    const e = earlier.tasks.get(t.name);
    if (e) attempts.set(t.name, e.attempts);
    const w = why.get(t.name);
    if (w !== undefined) rerun.push({ task: t.name, why: w });
    else
      reused.set(t.name, {
        attempt: e!.lastAttempt,
        status: e!.status === 'READY' ? 'READY' : 'COMPLETED',
      });
  }
  return { reused, attempts, rerun, session: earlier.sessions + 1 };
}

function describe(s: TaskStatus): string {
  if (s === 'FAILED' || s === 'CANCELLED') return s.toLowerCase();
  return `left ${s} by a driver that stopped`;
}

/** The driver of this process, recorded in `run_started`. */
export function thisDriver(startTime: number | null): DriverInfo {
  return { pid: process.pid, host: hostname(), ...(startTime !== null ? { startTime } : {}) };
}

/**
 * Is the last session's driver still running? `unknown` when it ran on another host (its pid
 * means nothing here) or was not recorded (a run from before drivers were recorded).
 */
export function driverState(d: DriverInfo | undefined): 'alive' | 'gone' | 'unknown' {
  if (!d) return 'unknown';
  if (d.host !== hostname()) return 'unknown';
  if (d.pid === process.pid) return 'gone';
  return isProcessAlive(d.pid, d.startTime ?? null) ? 'alive' : 'gone';
}
