/**
 * The local backend: every node is this machine. Allocation is synthetic (`localhost`,
 * `localhost-1`, … at 127.0.0.1) and never owned; each task attempt is a process group
 * (util/process-group.ts) whose stdout+stderr append straight to the task log.
 *
 * The handle is plain data (`ids: {pid, pgid}`), so a later process can still find the group;
 * the live GroupHandle objects are kept in a map keyed by pgid for this driver's own use.
 */
import type { Backend, BackendCapabilities, ExitStatus, LaunchContext, TaskHandle } from '../backend.js';
import type { PlannedBackend, PlannedNode, PlannedTask } from '../../plan/types.js';
import { spawnGroup, type GroupHandle } from '../../util/process-group.js';
import { groupState } from '../../util/group-liveness.js';
import { SflowError } from '../../config/errors.js';

export const LOCAL_CAPABILITIES: BackendCapabilities = {
  defaultOperator: 'bash',
  gpuIndices: true,
  gpuReservationRegistry: false,
  monitor: true,
  batch: false,
  failFastDefault: false,
};

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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class LocalBackend implements Backend {
  readonly name: string;
  readonly type = 'local' as const;
  private readonly planned: PlannedBackend | undefined;
  private readonly groups = new Map<number, GroupHandle>();

  constructor(planned?: PlannedBackend) {
    this.planned = planned;
    this.name = planned?.name ?? 'local';
  }

  capabilities(): BackendCapabilities {
    return { ...LOCAL_CAPABILITIES };
  }

  async preflight(): Promise<void> {
    // nothing to check: bash is looked up at launch and reported as a task failure
  }

  async allocate(): Promise<PlannedNode[]> {
    const cfg = this.planned?.config ?? {};
    const count = this.planned?.nodes.length || numberOr(cfg.nodes, 1) || 1;
    const gpus = numberOr(cfg.gpus_per_node, this.planned?.nodes[0]?.numGpus ?? null);
    return localNodes(count, gpus);
  }

  async launch(task: PlannedTask, ctx: LaunchContext): Promise<TaskHandle> {
    let group: GroupHandle;
    try {
      group = await spawnGroup({ argv: task.argv, cwd: ctx.cwd, env: ctx.env, logPath: task.logPath });
    } catch (e) {
      throw new SflowError('LAUNCH_FAILED', `Task '${task.name}': ${(e as Error).message}`, { phase: 'run' });
    }
    this.groups.set(group.pgid, group);
    return {
      backend: this.name,
      task: task.name,
      attempt: ctx.attempt,
      ids: { pid: group.pid, pgid: group.pgid },
      startedAt: new Date(group.startedAt).toISOString(),
      logPath: task.logPath,
    };
  }

  /** The live group behind a handle launched by this process, if any. */
  group(handle: TaskHandle): GroupHandle | undefined {
    return this.groups.get(Number(handle.ids.pgid));
  }

  async wait(handle: TaskHandle): Promise<ExitStatus> {
    const g = this.group(handle);
    if (g) {
      const e = await g.exited;
      return { code: e.code, signal: e.signal };
    }
    // a group started by another driver: we cannot read its status, only see it end
    const pgid = Number(handle.ids.pgid);
    while (groupState(pgid) === 'alive') await sleep(100);
    return { code: null, signal: null };
  }

  /** True while some process of the attempt still runs (leader or stray children). */
  isAlive(handle: TaskHandle): boolean {
    const g = this.group(handle);
    return g ? g.isRunning() : groupState(Number(handle.ids.pgid)) === 'alive';
  }

  async stop(handle: TaskHandle, graceMs: number): Promise<void> {
    await this.stopWithOutcome(handle, graceMs);
  }

  /** stop() that also says which signals were needed. */
  async stopWithOutcome(
    handle: TaskHandle,
    graceMs: number,
  ): Promise<{ signals: string[]; gone: boolean; alreadyGone: boolean }> {
    const pgid = Number(handle.ids.pgid);
    const g = this.groups.get(pgid);
    if (g) {
      const out = await g.stop(graceMs);
      if (out.gone) this.groups.delete(pgid);
      return { signals: out.signals, gone: out.gone, alreadyGone: out.alreadyGone };
    }
    return stopForeignGroup(pgid, graceMs);
  }

  async kill(handle: TaskHandle): Promise<void> {
    const pgid = Number(handle.ids.pgid);
    const g = this.groups.get(pgid);
    if (g) g.killGroupNow();
    else signalGroup(pgid, 'SIGKILL');
  }

  async release(): Promise<void> {
    // synthetic allocation: nothing to give back
  }
}

function signalGroup(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** TERM → grace → KILL for a group this process did not spawn (e.g. from a handle file). */
async function stopForeignGroup(pgid: number, graceMs: number) {
  const signals: string[] = [];
  if (groupState(pgid) !== 'alive') return { signals, gone: true, alreadyGone: true };
  if (signalGroup(pgid, 'SIGTERM')) signals.push('SIGTERM');
  const until = Date.now() + graceMs;
  while (Date.now() < until && groupState(pgid) === 'alive') await sleep(20);
  if (groupState(pgid) === 'alive') {
    if (signalGroup(pgid, 'SIGKILL')) signals.push('SIGKILL');
    const killUntil = Date.now() + 2000;
    while (Date.now() < killUntil && groupState(pgid) === 'alive') await sleep(20);
  }
  return { signals, gone: groupState(pgid) !== 'alive', alreadyGone: false };
}
