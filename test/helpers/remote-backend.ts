/**
 * A test-only "remote" backend: an honest fake at the protocol boundary of a batch engine (think
 * squeue/scancel, `docker ps`, the Kubernetes API). The engine lives in this process and runs each
 * job as a real process group on this machine, so output, environment and sockets are real; what
 * is faked is the engine's behaviour, with injectable faults:
 *
 *   queueMs       a job waits in the queue before it runs (SUBMITTED before RUNNING)
 *   latencyMs     every engine call takes this long
 *   idDelayMs     the engine names a job (its remote id) only this long after submission
 *   allocateMs    allocation waits in a queue (progress reported; cancellable)
 *   lostStatus    tasks the engine stops reporting in status answers
 *   hangStatus    the next N status calls never answer (the caller's bound must cut them)
 *   failAfterSubmit  tasks accepted by the engine that then fail to start (image pull, …)
 *
 * It implements the contract with poll only (no watch), one engine call per batch, reports when
 * it started and ended each job with its status, and finds jobs of a dead driver by their labels
 * (run id, task, attempt), as real engines do by name or label.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  HANDLE_VERSION,
  handleKey,
  type Allocation,
  type AllocationProgress,
  type Backend,
  type BackendCapabilities,
  type HandleStatus,
  type Inspection,
  type LaunchRequest,
  type RecoverOutcome,
  type StopOptions,
  type StopOutcome,
  type TaskHandle,
} from '../../src/backends/backend.js';
import { slurmKind } from '../../src/backends/slurm/kind.js';
import * as z from 'zod';
import type { PlannedNode } from '../../src/plan/types.js';
import { spawnGroup, type GroupHandle } from '../../src/util/process-group.js';

export interface Faults {
  queueMs?: number;
  latencyMs?: number;
  idDelayMs?: number;
  allocateMs?: number;
  lostStatus?: string[];
  hangStatus?: number;
  failAfterSubmit?: string[];
}

type JobState = 'QUEUED' | 'RUNNING' | 'DONE' | 'FAILED' | 'CANCELLED';

interface Job {
  label: string;
  task: string;
  id?: string;
  state: JobState;
  code?: number | null;
  signal?: string | null;
  error?: string;
  group?: GroupHandle;
  cancelled: boolean;
  /** when the engine started and ended the job (reported with its status, as real engines do) */
  startedAt?: number;
  endedAt?: number;
}

/** The engine: a queue of jobs run as local process groups. Shared by every backend instance (drivers). */
export class FakeEngine {
  readonly jobs = new Map<string, Job>();
  readonly calls = { submit: 0, status: 0, cancel: 0, release: 0 };
  /** handles asked about in each status call */
  readonly statusBatches: number[] = [];
  private seq = 0;

  constructor(readonly faults: Faults = {}) {}

  async latency(signal?: AbortSignal): Promise<void> {
    if (this.faults.latencyMs) await sleep(this.faults.latencyMs, undefined, { signal });
  }

  submit(label: string, task: string, run: () => Promise<GroupHandle>): void {
    this.calls.submit++;
    const job: Job = { label, task, state: 'QUEUED', cancelled: false };
    this.jobs.set(label, job);
    const f = this.faults;
    setTimeout(() => (job.id = `job-${++this.seq}`), f.idDelayMs ?? 0).unref();
    setTimeout(() => {
      if (job.cancelled) return;
      if (f.failAfterSubmit?.includes(task)) {
        job.state = 'FAILED';
        job.error = `engine could not start the job: image pull failed for ${task}`;
        return;
      }
      run().then(
        (g) => {
          job.group = g;
          job.state = 'RUNNING';
          job.startedAt = g.startedAt;
          void g.exited.then((e) => {
            job.endedAt = e.at ?? Date.now();
            job.state = job.cancelled ? 'CANCELLED' : 'DONE';
            job.code = e.code;
            job.signal = e.signal;
          });
          if (job.cancelled) void g.stop(0);
        },
        (e: unknown) => {
          job.state = 'FAILED';
          job.error = e instanceof Error ? e.message : String(e);
        },
      );
    }, f.queueMs ?? 0).unref();
  }

  /** One status call for many jobs (lost ones are left out of the answer). */
  async status(labels: string[], signal: AbortSignal): Promise<Map<string, Job>> {
    this.calls.status++;
    this.statusBatches.push(labels.length);
    if ((this.faults.hangStatus ?? 0) > 0) {
      this.faults.hangStatus = (this.faults.hangStatus ?? 1) - 1;
      await new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('status call aborted')), { once: true }),
      );
    }
    await this.latency(signal);
    const out = new Map<string, Job>();
    for (const l of labels) {
      const j = this.jobs.get(l);
      if (j && !this.faults.lostStatus?.includes(j.task)) out.set(l, j);
    }
    return out;
  }

  /** One cancel call for many jobs: TERM, grace, KILL each. */
  async cancel(labels: string[], graceMs: number, force: boolean): Promise<Map<string, StopOutcome>> {
    this.calls.cancel++;
    const out = new Map<string, StopOutcome>();
    await Promise.all(
      labels.map(async (l) => {
        const j = this.jobs.get(l);
        const t0 = Date.now();
        if (!j || j.state === 'DONE' || j.state === 'FAILED' || j.state === 'CANCELLED') {
          out.set(l, { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 });
          return;
        }
        j.cancelled = true;
        if (!j.group) {
          j.state = 'CANCELLED';
          out.set(l, { signals: ['cancel'], gone: true, alreadyGone: false, elapsedMs: Date.now() - t0 });
          return;
        }
        if (force) j.group.killGroupNow();
        const o = await j.group.stop(graceMs);
        out.set(l, {
          signals: [...o.signals],
          gone: o.gone,
          alreadyGone: o.alreadyGone,
          elapsedMs: o.elapsedMs,
        });
      }),
    );
    return out;
  }
}

const label = (h: Pick<TaskHandle, 'runId' | 'task' | 'attempt'>): string =>
  `${h.runId}/${h.task}#${h.attempt}`;

/** the fake engine's state of a handle: its submission key, and the job id once the engine gave one */
const FakeEngineState = z.object({
  kind: z.literal('fake-engine'),
  submission: z.string().min(1),
  job: z.string().min(1).optional(),
});
type FakeEngineState = z.infer<typeof FakeEngineState>;

/** this backend's parse boundary: a state it did not write is refused, as a real kind does */
function fakeStateOf(h: TaskHandle): FakeEngineState {
  const r = FakeEngineState.safeParse(h.engine);
  if (!r.success) throw new Error(`handle of ${h.task}#${h.attempt}: not a fake-engine engine state`);
  return r.data;
}

const named = (state: FakeEngineState): NonNullable<HandleStatus['named']> => ({
  engine: state,
  remoteIds: state.job ? [state.job] : [],
});

export const REMOTE_CAPABILITIES: BackendCapabilities = {
  ...slurmKind.capabilities,
  label: 'remote (test)',
  pollIntervalMs: 20,
};

export class RemoteBackend implements Backend {
  readonly type = 'slurm' as const;
  releases = 0;
  private allocation: Allocation | undefined;

  constructor(
    readonly engine: FakeEngine,
    readonly name = 'remote',
    private readonly runId = 'remote-run',
    private readonly nodeCount = 2,
  ) {}

  capabilities(): BackendCapabilities {
    return REMOTE_CAPABILITIES;
  }

  async preflight(signal: AbortSignal): Promise<void> {
    await this.engine.latency(signal);
  }

  async allocate(signal: AbortSignal, progress: AllocationProgress): Promise<Allocation> {
    const until = Date.now() + (this.engine.faults.allocateMs ?? 0);
    while (Date.now() < until) {
      progress(`allocation queued (${Math.ceil((until - Date.now()) / 1000)}s left)`);
      await sleep(Math.min(50, until - Date.now()), undefined, { signal });
    }
    await this.engine.latency(signal);
    const nodes: PlannedNode[] = Array.from({ length: this.nodeCount }, (_, i) => ({
      name: `${this.name}-node${i}`,
      ip: '127.0.0.1',
      index: i,
      numGpus: null,
    }));
    this.allocation = { id: 'alloc-1', nodes, owned: true };
    return this.allocation;
  }

  async launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    await this.engine.latency(signal);
    const spec = req.specs[0];
    const handle: TaskHandle = {
      v: HANDLE_VERSION,
      backend: this.name,
      type: this.type,
      runId: this.runId,
      task: req.task.name,
      attempt: req.attempt,
      state: 'SUBMITTED',
      nodes: req.task.nodes.map((n) => n.name),
      ...named({
        kind: 'fake-engine',
        submission: label({ runId: this.runId, task: req.task.name, attempt: req.attempt }),
      }),
      submittedAt: new Date().toISOString(),
      logPath: req.task.logPath,
    };
    this.engine.submit(label(handle), req.task.name, () =>
      spawnGroup({
        argv: spec.argv,
        cwd: req.cwd,
        env: { ...req.baseEnv, ...spec.env },
        logPath: req.task.logPath,
      }),
    );
    req.record(handle);
    return handle;
  }

  async poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    const got = await this.engine.status(handles.map(label), signal);
    const out = new Map<string, HandleStatus>();
    for (const h of handles) {
      const j = got.get(label(h));
      if (j) out.set(handleKey(h), toStatus(j, label(h)));
    }
    return out;
  }

  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    signal.throwIfAborted();
    const got = await this.engine.cancel(handles.map(label), opts.graceMs, opts.force ?? false);
    return new Map(handles.map((h) => [handleKey(h), got.get(label(h))!]));
  }

  async inspect(h: TaskHandle, signal: AbortSignal): Promise<Inspection> {
    const j = (await this.engine.status([label(h)], signal)).get(label(h));
    if (!j) return { alive: false, state: 'UNKNOWN' };
    const s = toStatus(j, label(h));
    return {
      alive: j.state === 'QUEUED' || j.state === 'RUNNING',
      state: s.state,
      ...(s.exit ? { exit: s.exit } : {}),
    };
  }

  async recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome> {
    const { submission } = fakeStateOf(record);
    const seen = await this.inspect(record, signal);
    if (!seen.alive) return { found: false, detail: `job ${submission} is not running (${seen.state})` };
    const stop = (await this.stop([record], opts, signal)).get(handleKey(record));
    return { found: true, ...(stop ? { stop } : {}), detail: `job ${submission} cancelled` };
  }

  async release(signal: AbortSignal, nodes?: string[]): Promise<void> {
    signal.throwIfAborted();
    if (!this.allocation) return; // never allocated or already given back: nothing to do
    if (nodes) {
      this.allocation = {
        ...this.allocation,
        nodes: this.allocation.nodes.filter((n) => !nodes.includes(n.name)),
      };
      return;
    }
    this.engine.calls.release++;
    this.releases++;
    this.allocation = undefined;
  }
}

function toStatus(j: Job, submission: string): HandleStatus {
  const ids = {
    ...(j.id ? { named: named({ kind: 'fake-engine', submission, job: j.id }) } : {}),
    ...(j.startedAt !== undefined ? { startedAt: j.startedAt } : {}),
    ...(j.endedAt !== undefined ? { endedAt: j.endedAt } : {}),
  };
  switch (j.state) {
    case 'QUEUED':
      return { state: 'SUBMITTED', ...ids };
    case 'RUNNING':
      return { state: 'RUNNING', ...ids };
    case 'FAILED':
      return { state: 'EXITED', error: j.error ?? 'failed', ...ids };
    default:
      return { state: 'EXITED', exit: { code: j.code ?? null, signal: j.signal ?? null }, ...ids };
  }
}
