/** In-memory backend, probe driver and plan builders for orchestrator unit tests. */
import {
  HANDLE_VERSION,
  handleKey,
  type Allocation,
  type Backend,
  type BackendCapabilities,
  type ExitStatus,
  type HandleStatus,
  type Inspection,
  type LaunchRequest,
  type RecoverOutcome,
  type StopOptions,
  type StopOutcome,
  type TaskHandle,
  type WatchHooks,
} from '../../../src/backends/backend.js';
import { LOCAL_CAPABILITIES, plannedBackend } from '../../helpers/backends.js';
import type { Plan, PlannedProbe, PlannedTask } from '../../../src/plan/types.js';
import { plannedTask } from '../../helpers/planned-task.js';
import type { CheckResult } from '../../../src/probes/types.js';
import type {
  ProbeContext,
  ProbeDriver,
  ProbeLoop,
  ProbeLoopEvents,
} from '../../../src/probes/probe-driver.js';

/** What one attempt does: exit with `code` after `ms` (never exits when ms is undefined). */
export interface AttemptScript {
  code?: number;
  ms?: number;
}

interface Proc {
  task: string;
  attempt: number;
  alive: boolean;
  resolve: (s: ExitStatus) => void;
  exited: Promise<ExitStatus>;
  timer?: NodeJS.Timeout;
  launchedAt: number;
}

export class FakeBackend implements Backend {
  readonly name = 'local';
  readonly type = 'local' as const;
  readonly procs = new Map<string, Proc>();
  readonly launches: Array<{ task: string; attempt: number; at: number; env: Record<string, string> }> = [];
  readonly stops: string[] = [];
  private readonly handles = new Map<Proc, TaskHandle>();
  readonly kills: string[] = [];
  private readonly watchers = new Set<WatchHooks>();
  /** the backend's `taskReady`, when `opts.taskReady` gives one */
  readonly taskReady?: (handle: TaskHandle, signal: AbortSignal) => Promise<void>;
  /** per task: scripts per attempt (last one repeats) */
  constructor(
    private readonly scripts: Record<string, AttemptScript[] | AttemptScript>,
    private readonly opts: {
      ignoreTerm?: boolean;
      failLaunch?: string[];
      /** per task: how many launches fail with ETXTBSY (a transient start failure) before one starts */
      busyLaunches?: Record<string, number>;
      taskReady?: (handle: TaskHandle, signal: AbortSignal) => Promise<void>;
      /** handles are born SUBMITTED (an engine that says later when they run), not RUNNING */
      submittedOnly?: boolean;
      /** submittedAt of every handle (ISO time); '' when unset */
      submittedAt?: string;
      /** every launch takes this long before its handle exists (an engine's slow submit) */
      launchMs?: number;
      /** per task: a launch that fails this way only once the run's signal aborts (a submit cut short) */
      launchFailsOnAbort?: Record<string, Error>;
      /** the backend leaves recording its handles to the caller */
      noRecord?: boolean;
    } = {},
  ) {
    if (opts.taskReady) this.taskReady = opts.taskReady;
  }

  capabilities(): BackendCapabilities {
    return { ...LOCAL_CAPABILITIES, monitor: false };
  }
  async preflight() {}
  async allocate(): Promise<Allocation> {
    return { id: 'fake', nodes: [], owned: false };
  }
  async release() {}
  async inspect(h: TaskHandle): Promise<Inspection> {
    const alive = this.procs.get(handleKey(h))?.alive ?? false;
    return { alive, state: alive ? 'RUNNING' : 'EXITED' };
  }
  async recover(): Promise<RecoverOutcome> {
    return { found: false, detail: 'fake' };
  }

  async launch(req: LaunchRequest, signal?: AbortSignal): Promise<TaskHandle> {
    const { task, attempt } = req;
    if (this.opts.failLaunch?.includes(task.name)) throw new Error('no such program');
    const onAbort = this.opts.launchFailsOnAbort?.[task.name];
    if (onAbort && signal) {
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      throw onAbort;
    }
    if (this.opts.launchMs !== undefined) await new Promise((r) => setTimeout(r, this.opts.launchMs));
    const busy = this.opts.busyLaunches;
    if (busy?.[task.name]) {
      busy[task.name]--;
      throw Object.assign(new Error(`spawn ${task.name}: text file busy`), { code: 'ETXTBSY' });
    }
    const s = this.scripts[task.name];
    const list = Array.isArray(s) ? s : [s ?? { code: 0, ms: 0 }];
    const script = list[Math.min(attempt - 1, list.length - 1)];
    const h: TaskHandle = {
      v: HANDLE_VERSION,
      backend: 'local',
      type: 'local',
      runId: 'fake',
      task: task.name,
      attempt,
      state: this.opts.submittedOnly ? 'SUBMITTED' : 'RUNNING',
      nodes: [],
      engine: { kind: 'local', container: `fake-${1000 + this.launches.length}` },
      remoteIds: [`fake-${1000 + this.launches.length}`],
      submittedAt: this.opts.submittedAt ?? '',
      logPath: task.logPath,
    };
    let resolve!: (s: ExitStatus) => void;
    const exited = new Promise<ExitStatus>((r) => (resolve = r));
    const p: Proc = { task: task.name, attempt, alive: true, resolve, exited, launchedAt: Date.now() };
    void exited.then((exit) => {
      for (const w of this.watchers) w.onStatus(h, { state: 'EXITED', exit });
    });
    if (script.ms !== undefined) {
      p.timer = setTimeout(() => this.exit(p, { code: script.code ?? 0, signal: null }), script.ms);
    }
    this.procs.set(handleKey(h), p);
    this.handles.set(p, h);
    this.launches.push({
      task: task.name,
      attempt,
      at: Date.now(),
      env: { ...req.baseEnv, ...req.specs[0].env },
    });
    if (!this.opts.noRecord) req.record(h);
    return h;
  }

  watch(hooks: WatchHooks, signal: AbortSignal): void {
    this.watchers.add(hooks);
    signal.addEventListener('abort', () => this.watchers.delete(hooks), { once: true });
  }

  async poll(handles: TaskHandle[]): Promise<Map<string, HandleStatus>> {
    return new Map(
      handles.map((h) => [
        handleKey(h),
        { state: this.procs.get(handleKey(h))?.alive ? 'RUNNING' : 'EXITED' },
      ]),
    );
  }

  private exit(p: Proc, s: ExitStatus) {
    if (!p.alive) return;
    p.alive = false;
    clearTimeout(p.timer);
    p.resolve(s);
  }

  /** what the engine says about the latest attempt of `task`, as its watch would */
  emitStatus(task: string, status: HandleStatus, attempt?: number) {
    for (const p of this.procs.values()) {
      if (p.task !== task || (attempt !== undefined && p.attempt !== attempt)) continue;
      if (status.state === 'EXITED') {
        p.alive = false;
        clearTimeout(p.timer);
      }
      for (const w of this.watchers) w.onStatus(this.handles.get(p)!, status);
    }
  }

  /** make a running attempt exit now */
  exitNow(task: string, code: number, attempt?: number) {
    for (const p of this.procs.values())
      if (p.task === task && (attempt === undefined || p.attempt === attempt))
        this.exit(p, { code, signal: null });
  }

  async stop(handles: TaskHandle[], o: StopOptions, signal: AbortSignal): Promise<Map<string, StopOutcome>> {
    const out = new Map<string, StopOutcome>();
    await Promise.all(
      handles.map(async (h) => {
        const p = this.procs.get(handleKey(h));
        if (!p || !p.alive) {
          out.set(handleKey(h), { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 });
          return;
        }
        if (o.force) {
          this.kills.push(h.task);
          this.exit(p, { code: null, signal: 'SIGKILL' });
          out.set(handleKey(h), { signals: ['SIGKILL'], gone: true, alreadyGone: false, elapsedMs: 0 });
          return;
        }
        this.stops.push(h.task);
        if (this.opts.ignoreTerm) {
          await new Promise<void>((r) => {
            void p.exited.then(() => r());
            signal.addEventListener('abort', () => r(), { once: true });
          });
        } else this.exit(p, { code: null, signal: 'SIGTERM' });
        out.set(handleKey(h), { signals: ['SIGTERM'], gone: !p.alive, alreadyGone: false, elapsedMs: 0 });
      }),
    );
    return out;
  }

  alive(task: string) {
    return [...this.procs.values()].some((p) => p.task === task && p.alive);
  }
}

/** Probe behaviour per task: readiness passes after `readyMs` (never if undefined); failure fires after `failMs`. */
export interface FakeProbeScript {
  readyMs?: number;
  failMs?: number;
  /** answer of checkOnce (final readiness check) */
  finalCheck?: boolean;
  /** how long checkOnce takes (default: at once) */
  finalCheckMs?: number;
  /** a verdict already on its way arrives even after the loop was stopped (a check in flight) */
  ignoreStop?: boolean;
  /** the probe finds it cannot run (its pattern past the regex time limit) after this long */
  limitMs?: number;
}

export class FakeProbes implements ProbeDriver {
  readonly started: Array<{ task: string; role: string; at: number }> = [];
  /** the context each probe loop was started with */
  readonly contexts: ProbeContext[] = [];
  readonly stopped: string[] = [];
  active = 0;
  constructor(private readonly scripts: Record<string, FakeProbeScript>) {}

  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop {
    const s = this.scripts[ctx.task.name] ?? {};
    this.started.push({ task: ctx.task.name, role: probe.role, at: Date.now() });
    this.contexts.push(ctx);
    this.active++;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const end = () => {
      if (!stopped) this.active--;
      stopped = true;
    };
    if (s.limitMs !== undefined) {
      timer = setTimeout(() => {
        end();
        ev.onLimit?.('pattern past its time limit');
      }, s.limitMs);
    } else if (probe.role === 'readiness') {
      if (s.readyMs !== undefined) {
        timer = setTimeout(() => {
          end();
          ev.onTrigger({ ok: true, detail: 'up' });
        }, s.readyMs);
      } else if (probe.timeoutS > 0) {
        timer = setTimeout(() => {
          end();
          ev.onDeadline(probe.timeoutS * 1000, { ok: false, detail: 'connection refused' });
        }, probe.timeoutS * 1000);
      }
    } else if (s.failMs !== undefined) {
      timer = setTimeout(() => {
        end();
        ev.onTrigger({ ok: true, detail: 'matched' });
      }, s.failMs);
    }
    return {
      stop: () => {
        if (!s.ignoreStop) clearTimeout(timer);
        if (!stopped) this.stopped.push(`${ctx.task.name}:${probe.role}`);
        end();
      },
    };
  }

  async checkOnce(_p: PlannedProbe, ctx: ProbeContext): Promise<CheckResult> {
    const ms = this.scripts[ctx.task.name]?.finalCheckMs;
    if (ms !== undefined) await new Promise((r) => setTimeout(r, ms));
    const ok = this.scripts[ctx.task.name]?.finalCheck ?? false;
    return { ok, detail: ok ? 'up' : 'refused' };
  }
}

export function probe(role: 'readiness' | 'failure', over: Partial<PlannedProbe> = {}): PlannedProbe {
  return {
    role,
    kind: 'tcp_port',
    port: 1,
    host: '127.0.0.1',
    hosts: ['127.0.0.1'],
    delayS: 0,
    timeoutS: 1200,
    eachCheckTimeoutS: 1,
    intervalS: 1,
    successThreshold: 1,
    failureThreshold: 1,
    ...over,
  } as PlannedProbe; // a hand-made probe: the overrides may name any kind
}

export function task(name: string, over: Partial<PlannedTask> = {}): PlannedTask {
  return plannedTask(name, over);
}

export function plan(tasks: PlannedTask[], runDir = '/nonexistent'): Plan {
  return {
    workflow: 'wf',
    runId: 'wf-1',
    dryRun: false,
    paths: { workspaceDir: runDir, outputDir: runDir, runDir },
    variables: [],
    backends: [plannedBackend()],
    artifacts: [],
    tasks,
    order: tasks.map((t) => t.name),
    warnings: [],
    storage: [],
    uploadAll: null,
    workflowMonitor: null,
  };
}
