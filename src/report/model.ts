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
  const m: ReportModel = {
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
  const byName = new Map<string, ReportTask>();
  const probes = new Map<string, ProbeSeries>();
  const task = (name: string): ReportTask => {
    let r = byName.get(name);
    if (!r) {
      r = { name, status: 'PENDING', attempts: [], exitCode: null };
      byName.set(name, r);
      m.tasks.push(r);
    }
    return r;
  };
  const attempt = (r: ReportTask, n: number, t: number): Attempt => {
    let a = r.attempts.find((x) => x.n === n);
    if (!a) {
      a = { n, session: Math.max(1, m.sessions.length), submitted: t, outcome: 'PENDING', exitCode: null };
      r.attempts.push(a);
    }
    return a;
  };
  let last = 0;
  for (const e of events) {
    // a later session: what the earlier one left open ended with its last event
    if (e.type === 'run_started' && m.sessions.length) closeSession(m, last);
    if (e.t > last) last = e.t;
    switch (e.type) {
      case 'run_started':
        if (!m.sessions.length) m.startedAt = e.t; // the run started with its first session
        m.sessions.push({
          n: e.session ?? m.sessions.length + 1,
          startedAt: e.t,
          ...(e.resume ? { reused: e.resume.reused, rerun: e.resume.rerun, forced: e.resume.forced } : {}),
        });
        m.finished = false;
        m.workflow = e.workflow;
        m.runId = e.runId;
        m.runDir = e.runDir;
        for (const n of e.tasks) task(n);
        break;
      case 'task_reused': {
        const r = task(e.task);
        r.status = e.status;
        r.reused = { session: m.sessions[m.sessions.length - 1]?.n ?? 2, attempt: e.attempt };
        break;
      }
      case 'run_plan':
        for (const info of e.tasks) task(info.name).info = info;
        m.backends = e.backends;
        break;
      case 'task_submitted': {
        const r = task(e.task);
        r.reused = undefined;
        r.status = 'SUBMITTED'; // handed to the backend: may wait in the engine's queue
        attempt(r, e.attempt, e.t).outcome = 'SUBMITTED';
        break;
      }
      case 'task_started': {
        const r = task(e.task);
        r.status = 'RUNNING';
        const a = attempt(r, e.attempt, e.t);
        a.started = eventTime(e); // the engine's start when it gave one
        a.outcome = 'RUNNING';
        // the GPUs the reservation registry granted the attempt (backend contract v2 handle)
        const gpus = e.handle?.gpus;
        if (gpus?.indices.length) r.seenGpus = gpus.indices.join(',');
        if (gpus?.uuids.length) r.seenGpuUuids = [...gpus.uuids];
        break;
      }
      case 'task_ready': {
        const r = task(e.task);
        r.status = 'READY';
        const a = attempt(r, e.attempt, e.t);
        a.ready = e.t;
        a.outcome = 'READY';
        break;
      }
      case 'task_retry': {
        const r = task(e.task);
        r.status = 'PENDING';
        const a = attempt(r, e.attempt, e.t);
        a.ended = eventTime(e);
        a.outcome = 'RETRIED';
        a.exitCode = e.exitCode;
        break;
      }
      case 'task_finished': {
        const r = task(e.task);
        r.status = e.status;
        r.exitCode = e.exitCode;
        r.reason = e.reason;
        if (e.attempt < 1) break; // cancelled before it ever started: no attempt
        const a = attempt(r, e.attempt, e.t);
        a.ended ??= eventTime(e);
        a.outcome = e.status;
        a.exitCode = e.exitCode;
        a.signal = e.signal;
        a.reason = e.reason;
        break;
      }
      case 'task_stopped': {
        const r = task(e.task);
        const a = r.attempts.find((x) => x.n === e.attempt);
        if (a) a.stopped = { t: e.t, why: e.why };
        break;
      }
      case 'probe_result': {
        const target = e.target ?? e.kind;
        const key = `${e.task}\u0000${e.role}\u0000${target}`;
        let p = probes.get(key);
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
          probes.set(key, p);
          m.probes.push(p);
        }
        p.total++;
        if (e.ok) {
          p.passed++;
          p.firstPass ??= e.t;
        }
        p.lastDetail = e.detail;
        if (p.checks.length < MAX_CHECKS) p.checks.push({ t: e.t, ok: e.ok });
        else p.checks[MAX_CHECKS - 1] = { t: e.t, ok: e.ok }; // keep the latest check visible
        break;
      }
      case 'result_parsed':
        task(e.task).result = {
          ok: e.ok,
          values: e.values,
          errors: e.errors,
          resultPath: e.resultPath,
          assertions: e.assertions ?? [],
        };
        break;
      case 'fail_fast':
        m.failFast = e.message;
        break;
      case 'signal':
        m.signals.push(e.signal);
        break;
      case 'log':
        if (e.level === 'error' && m.errors.length < 50) m.errors.push(e.message);
        else if (e.level === 'warning') m.warnings++;
        break;
      case 'run_finished': {
        m.finished = true;
        m.status = e.status;
        m.exitCode = e.exitCode;
        m.message = e.message;
        m.endedAt = e.t;
        const s = m.sessions[m.sessions.length - 1];
        if (s) Object.assign(s, { endedAt: e.t, status: e.status });
        break;
      }
      default:
        break;
    }
  }
  if (!m.finished) m.endedAt = last;
  if (!m.startedAt) m.startedAt = firstTime(m) ?? last;
  return m;
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
