/**
 * The local backend: every node is this machine. Allocation is synthetic (`localhost`,
 * `localhost-1`, … at 127.0.0.1, plus the machine's GPUs when tasks ask for GPUs) and never owned;
 * each task attempt is a process group (util/process-group.ts) whose stdout+stderr append straight
 * to the task log. The handle names the group (`process: {pid, pgid, host, startTime}`), so a later
 * driver can find it in the ledger; the live GroupHandle objects stay in a map for this driver.
 *
 * One process runs per attempt (spec: local `SFLOW_TASK_NODE_INDEX` is 0): the leader's launch
 * spec; every synthetic node is this machine anyway.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { groupState, processStartTime } from '../../util/process-liveness.js';
import type { ClaimedGpus, TaskGpuClaims } from '../../gpu/task-claims.js';
import type { PlannedBackend, PlannedNode, PlannedTask } from '../../plan/types.js';
import { SflowError } from '../../util/sflow-error.js';
import { raceAbort } from '../../util/abort.js';
import { errorMessage } from '../../util/errors.js';
import { getLauncher, warmLauncher } from '../../util/launcher/client.js';
import { spawnGroup, type GroupExit, type GroupHandle } from '../../util/process-group.js';
import { Slots } from '../../util/slots.js';
import { stopGroup } from '../../util/terminate/index.js';
import {
  HANDLE_VERSION,
  handleKey,
  type Allocation,
  type AllocationProgress,
  type Backend,
  type BackendCapabilities,
  type BackendContext,
  type HandleStatus,
  type Inspection,
  type LaunchRequest,
  type RecoverOutcome,
  type StopOptions,
  type StopOutcome,
  type TaskHandle,
  type WatchHooks,
} from '../backend.js';
import {
  ContainerReaper,
  launchArgv,
  recordedContainer,
  recoverContainer,
  removeContainer,
  taskContainer,
  type TaskContainer,
} from './containers.js';
import { gpuClaimsFor, withMachineGpus } from './gpus.js';
import { engineFields, engineStateOf } from '../handle-state.js';
import { localHandleState } from './handle-state.js';
import { reapLevel } from '../container-engine.js';

/** A local process's times: spawned, and its exit as the launcher reported it (none when unknown). */
function processTimes(g: GroupHandle, e: GroupExit): Pick<HandleStatus, 'startedAt' | 'endedAt'> {
  return { startedAt: g.startedAt, ...(e.at !== undefined && !e.error ? { endedAt: e.at } : {}) };
}

/** Synthetic nodes: `localhost`, `localhost-1`, … (backends.md §2). */
export function localNodes(count: number, gpusPerNode: number | null): PlannedNode[] {
  const n = Math.max(1, Math.floor(count) || 1);
  return Array.from({ length: n }, (_, i) => ({
    name: i === 0 ? 'localhost' : `localhost-${i}`,
    ip: '127.0.0.1',
    index: i,
    numGpus: gpusPerNode,
  }));
}

function numberOr(v: unknown, fallback: number | null): number | null {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback;
}

interface Live {
  handle: TaskHandle;
  task: PlannedTask;
  group: GroupHandle;
  /** the container of a `docker_run` task, removed when the task is stopped */
  container?: TaskContainer;
}

/**
 * Attempts being started at once (building their environment, handed to the launcher): the
 * launcher starts one at a time, so more in flight only hold memory — 10,000 tasks submitted
 * together each held their ~5 KB environment and its encoded frame until their turn.
 */
export const LOCAL_STARTS_IN_FLIGHT = 64;

const NO_CONTEXT: BackendContext = {
  runId: 'local',
  runDir: '',
  log: () => undefined,
  options: {},
  env: {},
  gpuTasks: false,
};

export class LocalBackend implements Backend {
  readonly name: string;
  readonly type = 'local' as const;
  private readonly live = new Map<string, Live>();
  private readonly watchers = new Set<WatchHooks>();
  private claims: TaskGpuClaims | undefined;
  private released = false;
  private readonly host = hostname();
  private readonly reaper = new ContainerReaper();
  /** starts in flight (LOCAL_STARTS_IN_FLIGHT); taken after the task's GPUs are granted */
  readonly starting = new Slots(LOCAL_STARTS_IN_FLIGHT);

  constructor(
    private readonly planned: PlannedBackend<'local'>,
    private readonly ctx: BackendContext = NO_CONTEXT,
  ) {
    this.name = planned.name;
  }

  capabilities(): BackendCapabilities {
    return { ...this.planned.capabilities };
  }

  async preflight(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted(); // bash is looked up at launch and reported as a task failure
  }

  async allocate(signal: AbortSignal, _progress: AllocationProgress): Promise<Allocation> {
    signal.throwIfAborted();
    warmLauncher(); // the launcher starts while the plan is finished
    const cfg = this.planned.config;
    const count = this.planned.nodes.length || numberOr(cfg.nodes, 1) || 1;
    const declared = numberOr(cfg.gpus_per_node, null);
    let nodes = localNodes(count, declared ?? this.planned.nodes[0]?.numGpus ?? null);
    if (this.ctx.gpuTasks) nodes = await raceAbort(withMachineGpus(nodes, declared), signal);
    signal.throwIfAborted();
    this.claims = gpuClaimsFor(nodes, this.ctx);
    this.released = false;
    return { id: 'local', nodes, owned: false };
  }

  async launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    signal.throwIfAborted();
    const { task } = req;
    if (this.claims) await getLauncher(); // its pid goes into the GPU records (gpu/keeper.ts)
    const got = this.claims ? await this.claims.acquire(task, signal) : null;
    let release: () => void;
    try {
      release = await this.starting.acquire(signal);
    } catch (e) {
      if (got) await this.claims?.done(task.name);
      throw e;
    }
    try {
      return await this.start(req, got, signal);
    } finally {
      release();
    }
  }

  /** builds the attempt's environment and starts it (one of the starts in flight) */
  private async start(req: LaunchRequest, got: ClaimedGpus | null, signal: AbortSignal): Promise<TaskHandle> {
    const { task } = req;
    const spec = req.specs[0];
    const env = {
      ...req.baseEnv,
      ...spec.env,
      // the registry's grant is this host's plan for the task: SFLOW_GPU_PLAN follows it
      ...(got ? { CUDA_VISIBLE_DEVICES: got.indices.join(','), SFLOW_GPU_PLAN: got.indices.join(',') } : {}),
    };
    // only a container task needs the merged environment (spreading process.env costs ~0.07 ms a task)
    const container = spec.container ? taskContainer(spec.container, { ...this.ctx.env, ...env }) : undefined;
    if (container)
      for (const line of await this.reaper.reap(container, signal)) this.ctx.log(line, reapLevel(line));
    let group: GroupHandle;
    try {
      group = await spawnGroup({
        argv: launchArgv(spec, container),
        cwd: req.cwd,
        env,
        logPath: task.logPath,
        graceMs: this.ctx.graceMs,
      });
    } catch (e) {
      if (got) await this.claims?.done(task.name);
      throw new SflowError('LAUNCH_FAILED', `Task '${task.name}': ${errorMessage(e)}`, {
        phase: 'run',
        cause: e,
      });
    }
    const startTime = group.startTime ?? processStartTime(group.pid);
    const handle: TaskHandle = {
      v: HANDLE_VERSION,
      backend: this.name,
      type: this.type,
      runId: this.ctx.runId,
      task: task.name,
      attempt: req.attempt,
      state: 'RUNNING',
      nodes: task.nodes.map((n) => n.name),
      process: {
        pid: group.pid,
        pgid: group.pgid,
        host: this.host,
        ...(startTime !== null ? { startTime } : {}),
      },
      ...engineFields(localHandleState, {
        kind: 'local',
        ...(container ? { container: container.name } : {}),
      }),
      ...(got ? { gpus: { indices: got.indices, uuids: got.uuids } } : {}),
      submittedAt: new Date(group.startedAt).toISOString(),
      logPath: task.logPath,
    };
    req.record(handle);
    const key = handleKey(handle);
    this.live.set(key, { handle, task, group, ...(container ? { container } : {}) });
    void group.exited.then(async (e) => {
      if (got) await this.claims?.done(task.name);
      const status: HandleStatus = {
        state: 'EXITED',
        exit: { code: e.code, signal: e.signal },
        ...(e.error ? { error: e.error } : {}),
        ...processTimes(group, e),
      };
      for (const w of this.watchers) w.onStatus(handle, status);
    });
    return handle;
  }

  watch(hooks: WatchHooks, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.watchers.add(hooks);
    signal.addEventListener('abort', () => this.watchers.delete(hooks), { once: true });
  }

  async poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    signal.throwIfAborted();
    const out = new Map<string, HandleStatus>();
    for (const h of handles) {
      const key = handleKey(h);
      const own = this.live.get(key)?.group;
      const exit = own?.exitInfo();
      if (own && exit)
        out.set(key, {
          state: 'EXITED',
          exit: { code: exit.code, signal: exit.signal },
          ...(exit.error ? { error: exit.error } : {}),
          ...processTimes(own, exit),
        });
      else if (own) out.set(key, { state: 'RUNNING', startedAt: own.startedAt });
      else if (this.isHere(h))
        out.set(key, groupState(h.process!.pgid) === 'alive' ? { state: 'RUNNING' } : { state: 'EXITED' });
    }
    return out;
  }

  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    // one signal fans out to every handle of the batch: that many listeners are intended
    const batch = AbortSignal.any([signal]);
    setMaxListeners(0, batch);
    const results = await Promise.all(handles.map((h) => this.stopOne(h, opts, batch)));
    return new Map(handles.map((h, i) => [handleKey(h), results[i]]));
  }

  private async stopOne(h: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<StopOutcome> {
    const out = await this.stopGroupOf(h, opts, signal);
    const container = this.live.get(handleKey(h))?.container;
    // the client is gone; its container outlives it (--sig-proxy=false): removed by name, bounded
    const error = container ? await removeContainer(container, AbortSignal.timeout(90_000)) : undefined;
    return error ? { ...out, error: out.error ? `${out.error}; ${error}` : error } : out;
  }

  private async stopGroupOf(h: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<StopOutcome> {
    const own = this.live.get(handleKey(h))?.group;
    if (own) {
      const onAbort = () => own.killGroupNow();
      if (opts.force || signal.aborted) own.killGroupNow();
      else signal.addEventListener('abort', onAbort, { once: true });
      try {
        const o = await own.stop(opts.graceMs);
        return { signals: [...o.signals], gone: o.gone, alreadyGone: o.alreadyGone, elapsedMs: o.elapsedMs };
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    }
    if (!this.isHere(h)) {
      return {
        signals: [],
        gone: false,
        alreadyGone: false,
        elapsedMs: 0,
        error: 'not a process group of this machine',
      };
    }
    const o = await stopGroup(h.process!.pgid, { graceMs: opts.graceMs, force: opts.force, hurry: signal });
    return { signals: [...o.signals], gone: o.gone, alreadyGone: o.alreadyGone, elapsedMs: o.elapsedMs };
  }

  async inspect(h: TaskHandle, signal: AbortSignal): Promise<Inspection> {
    signal.throwIfAborted();
    const own = this.live.get(handleKey(h))?.group;
    if (!own && !this.isHere(h)) return { alive: false, state: 'UNKNOWN' };
    const alive = groupState(h.process!.pgid) === 'alive';
    const exit = own?.exitInfo();
    return {
      alive,
      state: exit || !alive ? 'EXITED' : 'RUNNING',
      ...(exit ? { exit: { code: exit.code, signal: exit.signal } } : {}),
      where: [this.host],
    };
  }

  async recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome> {
    // the kind's parse first: a state it cannot read is refused, never taken for "nothing left"
    const state = engineStateOf(localHandleState, record);
    if (!this.isHere(record))
      return { found: false, detail: `not on this machine (${record.process?.host ?? '?'})` };
    const group = await this.recoverGroup(record, opts, signal);
    const container = recordedContainer(state, this.ctx.env);
    if (!container) return group;
    // a docker_run task: its container outlives the client, whether the group still ran or not
    const c = await recoverContainer(container, opts, signal);
    const stop = group.stop ?? c.stop;
    return {
      found: group.found || c.found,
      ...(stop ? { stop: { ...stop, gone: (group.stop?.gone ?? true) && (c.stop?.gone ?? true) } } : {}),
      detail: `${group.detail}; ${c.detail}`,
    };
  }

  /** the attempt's process group (the attached docker client of a docker_run task) */
  private async recoverGroup(
    record: TaskHandle,
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<RecoverOutcome> {
    const { pid, pgid, startTime } = record.process!;
    // the leader still runs under a different start time: its pid (and group id) went to someone else
    const now = processStartTime(pid);
    if (startTime !== undefined && now !== null && now !== startTime)
      return { found: false, detail: `pid ${pid} belongs to another process now` };
    if (groupState(pgid) !== 'alive') return { found: false, detail: `process group ${pgid} has ended` };
    const stop = await this.stopGroupOf(record, opts, signal);
    return { found: true, stop, detail: `process group ${pgid} stopped (${stop.signals.join('+') || '-'})` };
  }

  async release(signal: AbortSignal, nodes?: string[]): Promise<void> {
    // synthetic allocation: nothing to give back but the GPU claims, once
    if (nodes !== undefined || this.released) return;
    this.released = true;
    signal.throwIfAborted();
    await this.claims?.releaseAll();
  }

  async taskReady(handle: TaskHandle, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const l = this.live.get(handleKey(handle));
    if (l && this.claims) await this.claims.ready(l.task);
  }

  /** a process group recorded on this machine */
  private isHere(h: TaskHandle): boolean {
    return Boolean(h.process && h.process.host === this.host && h.process.pgid > 1);
  }
}
