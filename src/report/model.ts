/**
 * The report's data, rebuilt from a run's events alone (the `events.jsonl` ledger): every task
 * attempt with its times and outcome, probe checks, parsed results and assertions, GPUs seen.
 * One pass over the events, O(events); nothing here reads files (see `load.ts`).
 */
import {
  eventTime,
  type AssertionOutcome,
  type PlanBackendInfo,
  type PlanTaskInfo,
  type RunEvent,
  type TaskStatus,
} from '../events/events.js';

type Ev<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;

/** How one attempt ended; RETRIED: it failed and another attempt followed. */
export type AttemptOutcome = TaskStatus | 'RETRIED';

export interface Attempt {
  n: number;
  /** the session that ran it: 1, or 2… after `sflow run --resume` */
  session: number;
  submitted: number;
  started?: number;
  ready?: number;
  ended?: number;
  outcome: AttemptOutcome;
  exitCode: number | null;
  signal?: string | null;
  reason?: string;
  /** stopped by sflow (teardown of a service, cancel, fail-fast) */
  stopped?: { t: number; why: string };
}

export interface TaskResult {
  ok: boolean;
  values: Record<string, unknown>;
  errors: string[];
  resultPath?: string;
  assertions: AssertionOutcome[];
}

export interface ReportTask {
  name: string;
  info?: PlanTaskInfo;
  status: TaskStatus;
  attempts: Attempt[];
  exitCode: number | null;
  reason?: string;
  result?: TaskResult;
  /** GPUs the last attempt got (CUDA_VISIBLE_DEVICES), when a backend claimed real ones */
  seenGpus?: string;
  seenGpuUuids?: string[];
  /** taken over by a resumed session (not run again): that session and the earlier attempt */
  reused?: { session: number; attempt: number };
}

/** One session of the run: the first run, then each `--resume`. */
export interface Session {
  n: number;
  startedAt: number;
  endedAt?: number;
  status?: string;
  reused?: number;
  rerun?: string[];
  forced?: boolean;
}

export interface ProbeCheck {
  t: number;
  ok: boolean;
}

export interface ProbeSeries {
  task: string;
  role: 'readiness' | 'failure';
  kind: string;
  target: string;
  checks: ProbeCheck[];
  total: number;
  passed: number;
  firstPass?: number;
  lastDetail: string;
}

export interface ReportModel {
  workflow: string;
  runId: string;
  runDir: string;
  startedAt: number;
  /** run_finished time, else the last event's (a run that is still going or was killed) */
  endedAt: number;
  finished: boolean;
  status: string;
  exitCode?: number;
  message: string;
  tasks: ReportTask[];
  backends: PlanBackendInfo[];
  probes: ProbeSeries[];
  failFast?: string;
  signals: string[];
  errors: string[];
  warnings: number;
  sessions: Session[];
}

/** Checks kept per probe for the trace strip (the count is kept exactly). */
const MAX_CHECKS = 400;

export function buildModel(events: Iterable<RunEvent>): ReportModel {
  const builder = new ReportBuilder();
  for (const e of events) builder.apply(e);
  return builder.finish();
}

/** Folds the event stream into the report's model, one event at a time. */
class ReportBuilder {
  readonly m: ReportModel = {
    workflow: '',
    runId: '',
    runDir: '',
    startedAt: 0,
    endedAt: 0,
    finished: false,
    status: 'RUNNING',
    message: '',
    tasks: [],
    backends: [],
    probes: [],
    signals: [],
    errors: [],
    warnings: 0,
    sessions: [],
  };
  private readonly byName = new Map<string, ReportTask>();
  private readonly probes = new Map<string, ProbeSeries>();
  /** the latest event time seen */
  private last = 0;

  private task(name: string): ReportTask {
    let r = this.byName.get(name);
    if (!r) {
      r = { name, status: 'PENDING', attempts: [], exitCode: null };
      this.byName.set(name, r);
      this.m.tasks.push(r);
    }
    return r;
  }

  private attempt(r: ReportTask, n: number, t: number): Attempt {
    let a = r.attempts.find((x) => x.n === n);
    if (!a) {
      a = {
        n,
        session: Math.max(1, this.m.sessions.length),
        submitted: t,
        outcome: 'PENDING',
        exitCode: null,
      };
      r.attempts.push(a);
    }
    return a;
  }

  apply(e: RunEvent): void {
    // a later session: what the earlier one left open ended with its last event
    if (e.type === 'run_started' && this.m.sessions.length) closeSession(this.m, this.last);
    if (e.t > this.last) this.last = e.t;
    switch (e.type) {
      case 'run_started':
        this.runStarted(e);
        break;
      case 'task_reused':
        this.reused(e);
        break;
      case 'run_plan':
        for (const info of e.tasks) this.task(info.name).info = info;
        this.m.backends = e.backends;
        break;
      case 'task_submitted':
        this.submitted(e);
        break;
      case 'task_started':
        this.started(e);
        break;
      case 'task_ready':
        this.ready(e);
        break;
      case 'task_retry':
        this.retried(e);
        break;
      case 'task_finished':
        this.finished(e);
        break;
      case 'task_stopped':
        this.stopped(e);
        break;
      case 'probe_result':
        this.probeResult(e);
        break;
      case 'result_parsed':
        this.task(e.task).result = {
          ok: e.ok,
          values: e.values,
          errors: e.errors,
          resultPath: e.resultPath,
          assertions: e.assertions ?? [],
        };
        break;
      case 'fail_fast':
        this.m.failFast = e.message;
        break;
      case 'signal':
        this.m.signals.push(e.signal);
        break;
      case 'log':
        if (e.level === 'error' && this.m.errors.length < 50) this.m.errors.push(e.message);
        else if (e.level === 'warning') this.m.warnings++;
        break;
      case 'run_finished':
        this.runFinished(e);
        break;
      default:
        break;
    }
  }

  private runStarted(e: Ev<'run_started'>): void {
    if (!this.m.sessions.length) this.m.startedAt = e.t; // the run started with its first session
    this.m.sessions.push({
      n: e.session ?? this.m.sessions.length + 1,
      startedAt: e.t,
      ...(e.resume ? { reused: e.resume.reused, rerun: e.resume.rerun, forced: e.resume.forced } : {}),
    });
    this.m.finished = false;
    this.m.workflow = e.workflow;
    this.m.runId = e.runId;
    this.m.runDir = e.runDir;
    for (const n of e.tasks) this.task(n);
  }

  private reused(e: Ev<'task_reused'>): void {
    const r = this.task(e.task);
    r.status = e.status;
    r.reused = { session: this.m.sessions[this.m.sessions.length - 1]?.n ?? 2, attempt: e.attempt };
  }

  private submitted(e: Ev<'task_submitted'>): void {
    const r = this.task(e.task);
    r.reused = undefined;
    r.status = 'SUBMITTED'; // handed to the backend: may wait in the engine's queue
    this.attempt(r, e.attempt, e.t).outcome = 'SUBMITTED';
  }

  private started(e: Ev<'task_started'>): void {
    const r = this.task(e.task);
    r.status = 'RUNNING';
    const a = this.attempt(r, e.attempt, e.t);
    a.started = eventTime(e); // the engine's start when it gave one
    a.outcome = 'RUNNING';
    // the GPUs the reservation registry granted the attempt (backend contract v2 handle)
    const gpus = e.handle?.gpus;
    if (gpus?.indices.length) r.seenGpus = gpus.indices.join(',');
    if (gpus?.uuids.length) r.seenGpuUuids = [...gpus.uuids];
  }

  private ready(e: Ev<'task_ready'>): void {
    const r = this.task(e.task);
    r.status = 'READY';
    const a = this.attempt(r, e.attempt, e.t);
    a.ready = e.t;
    a.outcome = 'READY';
  }

  private retried(e: Ev<'task_retry'>): void {
    const r = this.task(e.task);
    r.status = 'PENDING';
    const a = this.attempt(r, e.attempt, e.t);
    a.ended = eventTime(e);
    a.outcome = 'RETRIED';
    a.exitCode = e.exitCode;
  }

  private finished(e: Ev<'task_finished'>): void {
    const r = this.task(e.task);
    r.status = e.status;
    r.exitCode = e.exitCode;
    r.reason = e.reason;
    if (e.attempt < 1) return; // cancelled before it ever started: no attempt
    const a = this.attempt(r, e.attempt, e.t);
    a.ended ??= eventTime(e);
    a.outcome = e.status;
    a.exitCode = e.exitCode;
    a.signal = e.signal;
    a.reason = e.reason;
  }

  private stopped(e: Ev<'task_stopped'>): void {
    const r = this.task(e.task);
    const a = r.attempts.find((x) => x.n === e.attempt);
    if (a) a.stopped = { t: e.t, why: e.why };
  }

  private probeResult(e: Ev<'probe_result'>): void {
    const target = e.target ?? e.kind;
    const key = `${e.task}\u0000${e.role}\u0000${target}`;
    let p = this.probes.get(key);
    if (!p) {
      p = {
        task: e.task,
        role: e.role,
        kind: e.kind,
        target,
        checks: [],
        total: 0,
        passed: 0,
        lastDetail: '',
      };
      this.probes.set(key, p);
      this.m.probes.push(p);
    }
    p.total++;
    if (e.ok) {
      p.passed++;
      p.firstPass ??= e.t;
    }
    p.lastDetail = e.detail;
    if (p.checks.length < MAX_CHECKS) p.checks.push({ t: e.t, ok: e.ok });
    else p.checks[MAX_CHECKS - 1] = { t: e.t, ok: e.ok }; // keep the latest check visible
  }

  private runFinished(e: Ev<'run_finished'>): void {
    this.m.finished = true;
    this.m.status = e.status;
    this.m.exitCode = e.exitCode;
    this.m.message = e.message;
    this.m.endedAt = e.t;
    const s = this.m.sessions[this.m.sessions.length - 1];
    if (s) Object.assign(s, { endedAt: e.t, status: e.status });
  }

  /** The model once every event is in: an unfinished run ends at its last event. */
  finish(): ReportModel {
    const m = this.m;
    if (!m.finished) m.endedAt = this.last;
    if (!m.startedAt) m.startedAt = firstTime(m) ?? this.last;
    return m;
  }
}

/**
 * A later session starts: what the earlier one left open (a driver killed mid-run) ended at the
 * earlier session's last event at the latest, so no bar spans the gap between sessions.
 */
function closeSession(m: ReportModel, lastT: number): void {
  const s = m.sessions[m.sessions.length - 1];
  s.endedAt ??= lastT;
  for (const t of m.tasks)
    for (const a of t.attempts) if (a.ended === undefined) a.ended = Math.min(a.stopped?.t ?? lastT, lastT);
}

function firstTime(m: ReportModel): number | undefined {
  let first: number | undefined;
  for (const t of m.tasks)
    for (const a of t.attempts) if (first === undefined || a.submitted < first) first = a.submitted;
  return first;
}

/** When an attempt's bar ends: its end, else when sflow stopped it, else the end of the run. */
export function attemptEnd(a: Attempt, m: ReportModel): number {
  return a.ended ?? a.stopped?.t ?? m.endedAt;
}

/** Tasks per status, in a fixed order (only statuses that occur). */
export function statusCounts(m: ReportModel): Array<[TaskStatus, number]> {
  const order: TaskStatus[] = [
    'COMPLETED',
    'READY',
    'FAILED',
    'CANCELLED',
    'RUNNING',
    'SUBMITTED',
    'PENDING',
  ];
  const n = new Map<TaskStatus, number>();
  for (const t of m.tasks) n.set(t.status, (n.get(t.status) ?? 0) + 1);
  return order.filter((s) => n.has(s)).map((s) => [s, n.get(s)!]);
}
