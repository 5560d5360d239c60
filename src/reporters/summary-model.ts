/**
 * The run summary's data, rebuilt from the event stream alone (no plan, no log scraping):
 * task rows, timeline, last-attempt probe traces, external command rows.
 */
import {
  eventTime,
  type PlanBackendInfo,
  type PlanTaskInfo,
  type RunEvent,
  type TaskStatus,
} from '../events/events.js';
import { EngineClocks } from './engine-clock.js';

type Ev<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;

export interface TaskRow {
  name: string;
  status: TaskStatus;
  attempts: number;
  firstStart?: number;
  lastStart?: number;
  readyAt?: number;
  endedAt?: number;
  stoppedAt?: number;
  exitCode: number | null;
  signal: string | null;
  reason?: string;
  /** GPUs the last attempt actually got (a backend that claims physical GPUs records them in the handle) */
  seenGpus?: string;
  seenGpuUuids?: string[];
  /** taken over from an earlier session by a resume (not run in this one) */
  reused?: boolean;
}

export interface TimelineRow {
  t: number;
  task: string;
  event: string;
  summary: string;
}

export interface ProbeTrace {
  role: 'readiness' | 'failure';
  kind: string;
  ok: boolean;
  detail: string;
  t: number;
  checks: number;
  since: number;
  /** the probe stopped for good: its pattern hit the regex time limit */
  limit?: string;
}

export interface ExternalRow {
  tool: string;
  ok: boolean;
  timedOut: boolean;
  durationMs: number;
  /** a failed call: what it was and what it said (the summary names it) */
  failure?: string;
  /** an expected answer (not a failure) */
  expected?: boolean;
}

export interface UploadRow {
  /** task name, or '(workflow)' for upload_all */
  task: string;
  target: string;
  from: string;
  dest: string;
  status: 'IN PROGRESS' | 'OK' | 'FAILED';
  bytes?: number;
  attempts: number;
  retries: number;
  durationMs?: number;
  error?: string;
  onError: 'warn' | 'fail';
}

export class SummaryModel {
  workflow = '';
  runId = '';
  runDir = '';
  startedAt = Date.now();
  endedAt: number | undefined;
  status: string = 'RUNNING';
  message = '';
  exitCode: number | undefined;
  plan: PlanTaskInfo[] = [];
  backends: PlanBackendInfo[] = [];
  commandLogs: Array<{ family: string; path: string }> = [];
  readonly tasks = new Map<string, TaskRow>();
  readonly timeline: TimelineRow[] = [];
  readonly probes = new Map<string, Map<string, ProbeTrace>>();
  readonly external: ExternalRow[] = [];
  failFast: string | undefined;
  signals: string[] = [];
  /** merged-pod members submitted behind a gate, until they start */
  private readonly gated = new Set<string>();
  /** one row per uploaded object (task uploads and the run archive), in start order */
  readonly uploads = new Map<string, UploadRow>();
  /** where each backend's engine clock is against this host's (from the task times) */
  readonly clocks = new EngineClocks();
  /** one per session: the first run, then each `--resume` */
  readonly sessions: Array<{ n: number; startedAt: number; reused?: number; rerun?: number }> = [];

  private row(name: string): TaskRow {
    let r = this.tasks.get(name);
    if (!r) {
      r = { name, status: 'PENDING', attempts: 0, exitCode: null, signal: null };
      this.tasks.set(name, r);
    }
    return r;
  }

  apply(e: RunEvent): void {
    this.clocks.apply(e);
    switch (e.type) {
      case 'run_started':
        this.startSession(e);
        break;
      case 'task_reused':
        this.reused(e);
        break;
      case 'run_plan':
        this.plan = e.tasks;
        this.backends = e.backends;
        this.commandLogs = e.commandLogs ?? [];
        break;
      case 'task_submitted':
        this.submitted(e);
        break;
      case 'task_started':
        this.started(e);
        break;
      case 'task_ready': {
        const r = this.row(e.task);
        r.status = 'READY';
        r.readyAt = e.t;
        this.timeline.push({ t: e.t, task: e.task, event: 'READY', summary: e.probe });
        break;
      }
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
      case 'external_call':
        this.externalCall(e);
        break;
      case 'fail_fast':
        this.failFast = e.message;
        this.timeline.push({ t: e.t, task: '-', event: 'FAIL_FAST', summary: e.message });
        break;
      case 'sink_failed':
        this.timeline.push({ t: e.t, task: '-', event: 'SINK_FAILED', summary: `${e.sink}: ${e.message}` });
        break;
      case 'signal':
        this.signals.push(e.signal);
        this.timeline.push({ t: e.t, task: '-', event: 'SIGNAL', summary: `${e.signal} (#${e.count})` });
        break;
      case 'upload':
        this.upload(e);
        break;
      case 'run_finished':
        this.endedAt = e.t;
        this.status = e.status;
        this.message = e.message;
        this.exitCode = e.exitCode;
        break;
      default:
        break;
    }
  }

  private startSession(e: Ev<'run_started'>): void {
    // a resumed run: one more session in the same run; the run started with the first one
    if (this.sessions.length === 0) this.startedAt = e.t;
    this.sessions.push({
      n: e.session ?? this.sessions.length + 1,
      startedAt: e.t,
      ...(e.resume ? { reused: e.resume.reused, rerun: e.resume.rerun.length } : {}),
    });
    if (this.sessions.length > 1) {
      this.endedAt = undefined;
      this.status = 'RUNNING';
      this.message = '';
      this.timeline.push({
        t: e.t,
        task: '-',
        event: 'RESUMED',
        summary: `session ${e.session ?? this.sessions.length}: ${e.resume?.reused ?? 0} reused, ${e.resume?.rerun.length ?? 0} to run`,
      });
    }
    this.workflow = e.workflow;
    this.runId = e.runId;
    this.runDir = e.runDir;
    for (const n of e.tasks) this.row(n);
  }

  private reused(e: Ev<'task_reused'>): void {
    const r = this.row(e.task);
    r.status = e.status;
    r.reused = true;
    r.reason = `reused: ${e.status} in an earlier session (attempt ${e.attempt})`;
    this.timeline.push({ t: e.t, task: e.task, event: 'REUSED', summary: `attempt=${e.attempt}` });
  }

  private submitted(e: Ev<'task_submitted'>): void {
    const r = this.row(e.task);
    r.status = 'SUBMITTED';
    r.reused = false;
    r.attempts = Math.max(r.attempts, e.attempt);
    this.probes.delete(e.task); // traces show the last attempt only
    this.timeline.push({
      t: e.t,
      task: e.task,
      event: 'SUBMITTED',
      summary: `attempt=${e.attempt}${e.gatedOn?.length ? ` gated_on=${e.gatedOn.join(',')}` : ''}`,
    });
    if (e.gatedOn?.length) this.gated.add(e.task);
  }

  private started(e: Ev<'task_started'>): void {
    const r = this.row(e.task);
    if (this.gated.delete(e.task))
      this.timeline.push({ t: e.t, task: e.task, event: 'UNGATED', summary: 'in-pod gate opened' });
    r.status = 'RUNNING';
    r.firstStart ??= eventTime(e);
    r.lastStart = eventTime(e);
    const got = e.handle?.gpus;
    if (got) {
      r.seenGpus = got.indices.join(',');
      r.seenGpuUuids = [...got.uuids];
    }
  }

  private retried(e: Ev<'task_retry'>): void {
    const r = this.row(e.task);
    r.status = 'PENDING';
    r.exitCode = e.exitCode;
    this.timeline.push({
      t: e.t,
      task: e.task,
      event: 'RETRY',
      summary: `exit=${e.exitCode ?? 'n/a'} delay=${e.delayS}s next=${e.nextAttempt}/${e.total}`,
    });
  }

  private finished(e: Ev<'task_finished'>): void {
    const r = this.row(e.task);
    r.status = e.status;
    r.endedAt = eventTime(e);
    r.exitCode = e.exitCode;
    r.signal = e.signal ?? null;
    r.reason = e.reason;
    const code = e.exitCode !== null ? `exit=${e.exitCode}` : e.signal ? `signal=${e.signal}` : '';
    this.timeline.push({
      t: e.t,
      task: e.task,
      event: e.status,
      summary: [code, e.reason].filter(Boolean).join(' '),
    });
  }

  private stopped(e: Ev<'task_stopped'>): void {
    const r = this.row(e.task);
    r.stoppedAt = e.t;
    this.timeline.push({
      t: e.t,
      task: e.task,
      event: 'STOPPED',
      summary: `${e.why} ${e.signals.join('+') || '-'} ${(e.elapsedMs / 1000).toFixed(3)}s`,
    });
  }

  private probeResult(e: Ev<'probe_result'>): void {
    let m = this.probes.get(e.task);
    if (!m) this.probes.set(e.task, (m = new Map<string, ProbeTrace>()));
    const key = `${e.role}/${e.target ?? e.kind}`;
    const prev = m.get(key);
    m.set(key, {
      role: e.role,
      kind: e.kind,
      ok: e.ok,
      detail: e.detail,
      t: e.t,
      checks: (prev?.checks ?? 0) + 1,
      since: prev?.since ?? e.t,
      ...(e.limit ? { limit: e.limit } : {}),
    });
    if (e.limit)
      this.timeline.push({
        t: e.t,
        task: e.task,
        event: 'PROBE_LIMIT',
        summary: `${e.role} ${e.target ?? e.kind}: ${e.limit}`,
      });
  }

  private externalCall(e: Ev<'external_call'>): void {
    this.external.push({
      tool: e.tool,
      ok: e.ok,
      timedOut: e.timedOut,
      durationMs: e.durationMs,
      ...(e.expected ? { expected: true } : {}),
      ...(!e.ok
        ? {
            failure: `${e.tool} ${e.args.slice(0, 6).join(' ')}${e.args.length > 6 ? ' …' : ''} → ${e.timedOut ? 'timed out' : `exit ${e.exitCode ?? '-'}`}${e.error ? `: ${e.error}` : ''}`,
          }
        : {}),
    });
  }

  private upload(e: Ev<'upload'>): void {
    const task = e.task ?? '(workflow)';
    const id = `${task}\u0000${e.from}\u0000${e.dest}`;
    let r = this.uploads.get(id);
    if (!r) {
      r = {
        task,
        target: e.target,
        from: e.from,
        dest: e.dest,
        status: 'IN PROGRESS',
        attempts: 1,
        retries: 0,
        onError: e.onError,
      };
      this.uploads.set(id, r);
    }
    if (e.bytes !== undefined) r.bytes = e.bytes;
    if (e.phase === 'retry') r.retries++;
    if (e.phase === 'done' || e.phase === 'failed') {
      r.status = e.phase === 'done' ? 'OK' : 'FAILED';
      r.attempts = Math.max(e.attempt ?? 1, r.retries + 1);
      r.durationMs = e.durationMs;
      if (e.error) r.error = e.error;
      this.timeline.push({
        t: e.t,
        task,
        event: e.phase === 'done' ? 'UPLOADED' : 'UPLOAD_FAILED',
        summary: e.dest,
      });
    }
  }
}
