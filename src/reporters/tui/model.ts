/**
 * What the live view shows, built from the run's event stream only (like the console view):
 * the workflow, its tasks with state / attempt / timing / placement, the backends' allocation
 * and recent notices. The view reads it on its own schedule; `version` tells it something changed.
 */
import { eventTime, type PlanBackendInfo, type RunEvent, type RunEventSink } from '../../events/events.js';

export type TaskState = 'PENDING' | 'SUBMITTED' | 'RUNNING' | 'READY' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface TaskRow {
  name: string;
  state: TaskState;
  attempt: number;
  attempts: number;
  startedAt?: number;
  endedAt?: number;
  nodes: string[];
  gpus: number[] | null;
  logPath: string;
  service: boolean;
  exitCode?: number | null;
  /** why it failed, or the last readiness check of a service still starting */
  detail?: string;
}

export interface Verdict {
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  exitCode: number;
  message: string;
  at: number;
}

const MAX_NOTICES = 50;

export class TuiModel implements RunEventSink {
  workflow = '';
  runDir = '';
  startedAt: number;
  verdict: Verdict | undefined;
  stopping: string | undefined;
  readonly tasks: TaskRow[] = [];
  backends: PlanBackendInfo[] = [];
  readonly notices: string[] = [];
  /** bumped on every change */
  version = 0;
  private readonly byName = new Map<string, TaskRow>();

  constructor(now = Date.now()) {
    this.startedAt = now;
  }

  private row(name: string): TaskRow {
    let r = this.byName.get(name);
    if (!r) {
      r = {
        name,
        state: 'PENDING',
        attempt: 0,
        attempts: 1,
        nodes: [],
        gpus: null,
        logPath: '',
        service: false,
      };
      this.byName.set(name, r);
      this.tasks.push(r);
    }
    return r;
  }

  notice(text: string): void {
    this.notices.push(text);
    if (this.notices.length > MAX_NOTICES) this.notices.shift();
    this.version++;
  }

  counts(): Record<TaskState, number> {
    const c = { PENDING: 0, SUBMITTED: 0, RUNNING: 0, READY: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0 };
    for (const t of this.tasks) c[t.state]++;
    return c;
  }

  emit(e: RunEvent): void {
    switch (e.type) {
      case 'run_started':
        this.workflow = e.workflow;
        this.runDir = e.runDir;
        this.startedAt = e.t;
        for (const t of e.tasks) this.row(t);
        if (e.resume)
          this.notice(
            `resumed (session ${e.session ?? 2}): ${e.resume.reused} task(s) reused, ${e.resume.rerun.length} to run`,
          );
        break;
      case 'run_plan':
        this.backends = e.backends;
        for (const p of e.tasks) {
          const r = this.row(p.name);
          Object.assign(r, {
            nodes: p.nodes,
            gpus: p.gpus,
            logPath: p.logPath,
            service: p.service,
            attempts: 1 + (p.retries?.count ?? 0),
          });
        }
        break;
      case 'task_submitted':
        Object.assign(this.row(e.task), { state: 'SUBMITTED', attempt: e.attempt, detail: undefined });
        break;
      case 'task_reused':
        // `--resume`: completed in an earlier session, not run again
        Object.assign(this.row(e.task), {
          state: e.status,
          attempt: e.attempt,
          detail: 'reused from an earlier session',
        });
        break;
      case 'task_started':
        Object.assign(this.row(e.task), {
          state: 'RUNNING',
          attempt: e.attempt,
          startedAt: eventTime(e),
          endedAt: undefined,
        });
        break;
      case 'task_ready':
        Object.assign(this.row(e.task), { state: 'READY', detail: undefined });
        break;
      case 'probe_result':
        if (e.role === 'readiness' && this.row(e.task).state === 'RUNNING')
          this.row(e.task).detail = `${e.kind}: ${e.detail}`;
        break;
      case 'task_retry':
        Object.assign(this.row(e.task), {
          state: 'PENDING',
          detail: `exit ${e.exitCode ?? '?'}; retry ${e.nextAttempt}/${e.total} in ${e.delayS}s`,
        });
        break;
      case 'task_finished': {
        const r = this.row(e.task);
        Object.assign(r, { state: e.status, endedAt: eventTime(e), exitCode: e.exitCode });
        // a service stopped by teardown after it was READY stays READY in the task table
        if (e.status === 'COMPLETED' || !e.reason) r.detail = undefined;
        else r.detail = e.reason;
        break;
      }
      case 'task_stopped': {
        const r = this.row(e.task);
        if (r.state === 'READY' || r.state === 'RUNNING')
          Object.assign(r, { endedAt: e.t, detail: `stopped (${e.why})` });
        break;
      }
      case 'signal':
        this.stopping =
          e.count === 1
            ? `${e.signal}: cancelling the workflow (again: kill at once)`
            : `${e.signal}: killing every task`;
        this.notice(this.stopping);
        return;
      case 'fail_fast':
        this.notice(e.message);
        return;
      case 'log':
        if (e.level === 'warning' || e.level === 'error') this.notice(e.message);
        return;
      case 'teardown':
        if (e.phase === 'start' && e.groups > 0) this.notice(`stopping ${e.groups} process group(s)…`);
        return;
      case 'run_finished':
        this.verdict = { status: e.status, exitCode: e.exitCode, message: e.message, at: e.t };
        break;
      default:
        return;
    }
    this.version++;
  }
}
