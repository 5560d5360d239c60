/** In-memory backend, probe driver and plan builders for orchestrator unit tests. */
import type {
  Backend,
  BackendCapabilities,
  ExitStatus,
  LaunchContext,
  TaskHandle,
} from '../../../src/backends/backend.js';
import type { Plan, PlannedProbe, PlannedTask } from '../../../src/plan/types.js';
import { plannedTask } from '../../helpers/planned-task.js';
import type {
  ProbeCheck,
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
  readonly kills: string[] = [];
  /** per task: scripts per attempt (last one repeats) */
  constructor(
    private readonly scripts: Record<string, AttemptScript[] | AttemptScript>,
    private readonly opts: { ignoreTerm?: boolean; failLaunch?: string[] } = {},
  ) {}

  capabilities(): BackendCapabilities {
    return {
      defaultOperator: 'bash',
      gpuIndices: true,
      gpuReservationRegistry: false,
      monitor: false,
      batch: false,
      failFastDefault: false,
    };
  }
  async preflight() {}
  async allocate() {
    return [];
  }
  async release() {}

  private key(h: TaskHandle) {
    return `${h.task}#${h.attempt}`;
  }

  async launch(task: PlannedTask, ctx: LaunchContext): Promise<TaskHandle> {
    if (this.opts.failLaunch?.includes(task.name)) throw new Error('no such program');
    const s = this.scripts[task.name];
    const list = Array.isArray(s) ? s : [s ?? { code: 0, ms: 0 }];
    const script = list[Math.min(ctx.attempt - 1, list.length - 1)];
    let resolve!: (s: ExitStatus) => void;
    const exited = new Promise<ExitStatus>((r) => (resolve = r));
    const p: Proc = {
      task: task.name,
      attempt: ctx.attempt,
      alive: true,
      resolve,
      exited,
      launchedAt: Date.now(),
    };
    if (script.ms !== undefined) {
      p.timer = setTimeout(() => this.exit(p, { code: script.code ?? 0, signal: null }), script.ms);
    }
    const h: TaskHandle = {
      backend: 'local',
      task: task.name,
      attempt: ctx.attempt,
      ids: { pid: 1000 + this.launches.length },
      startedAt: '',
      logPath: task.logPath,
    };
    this.procs.set(this.key(h), p);
    this.launches.push({ task: task.name, attempt: ctx.attempt, at: Date.now(), env: ctx.env });
    return h;
  }

  private exit(p: Proc, s: ExitStatus) {
    if (!p.alive) return;
    p.alive = false;
    clearTimeout(p.timer);
    p.resolve(s);
  }

  /** make a running attempt exit now */
  exitNow(task: string, code: number, attempt?: number) {
    for (const p of this.procs.values())
      if (p.task === task && (attempt === undefined || p.attempt === attempt))
        this.exit(p, { code, signal: null });
  }

  wait(h: TaskHandle) {
    return this.procs.get(this.key(h))!.exited;
  }
  isAlive(h: TaskHandle) {
    return this.procs.get(this.key(h))?.alive ?? false;
  }
  async stop(h: TaskHandle) {
    const p = this.procs.get(this.key(h))!;
    if (!p.alive) return;
    this.stops.push(h.task);
    if (this.opts.ignoreTerm) return p.exited.then(() => undefined);
    this.exit(p, { code: null, signal: 'SIGTERM' });
  }
  async kill(h: TaskHandle) {
    const p = this.procs.get(this.key(h))!;
    if (!p.alive) return;
    this.kills.push(h.task);
    this.exit(p, { code: null, signal: 'SIGKILL' });
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
}

export class FakeProbes implements ProbeDriver {
  readonly started: Array<{ task: string; role: string; at: number }> = [];
  readonly stopped: string[] = [];
  active = 0;
  constructor(private readonly scripts: Record<string, FakeProbeScript>) {}

  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop {
    const s = this.scripts[ctx.task.name] ?? {};
    this.started.push({ task: ctx.task.name, role: probe.role, at: Date.now() });
    this.active++;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const end = () => {
      if (!stopped) this.active--;
      stopped = true;
    };
    if (probe.role === 'readiness') {
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
        clearTimeout(timer);
        if (!stopped) this.stopped.push(`${ctx.task.name}:${probe.role}`);
        end();
      },
    };
  }

  async checkOnce(_p: PlannedProbe, ctx: ProbeContext): Promise<ProbeCheck> {
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
    delayS: 0,
    timeoutS: 1200,
    eachCheckTimeoutS: 1,
    intervalS: 1,
    successThreshold: 1,
    failureThreshold: 1,
    ...over,
  };
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
    backends: [{ name: 'local', type: 'local', isDefault: true, placeholder: false, nodes: [], config: {} }],
    artifacts: [],
    tasks,
    order: tasks.map((t) => t.name),
    warnings: [],
    storage: [],
    uploadAll: null,
    workflowMonitor: null,
  };
}
