/**
 * Per-task GPU claims in the cross-process reservation registry, for tasks that run on this
 * machine's real GPUs (local backend). The plan chose indices within this run; the registry makes
 * them disjoint from every other run on the machine: a `count` request prefers the planned indices
 * and takes other free cards when those are held elsewhere; an `indices` request claims exactly
 * those cards. The task then sees the claimed indices in CUDA_VISIBLE_DEVICES.
 */
import { escapeControls } from '../util/ansi.js';
import type { PlannedTask } from '../plan/types.js';
import { keeperOf } from './keeper.js';
import { claim, lend, release, releaseRun, type Claim } from './registry.js';
import { registrySettings, type RegistrySettings } from './settings.js';

export interface ClaimedGpus {
  indices: number[];
  uuids: string[];
}

export class TaskGpuClaims {
  private readonly claims = new Map<string, Claim>();
  /** records set aside as unbelievable, each logged once */
  private readonly ignoredSeen = new Set<string>();
  private readonly settings: RegistrySettings;

  constructor(
    private readonly runId: string,
    private readonly log: (message: string) => void = () => {},
    env: NodeJS.ProcessEnv = process.env,
    /** pid of the process that stops this run's tasks if the driver dies (the task launcher) */
    private readonly keeperPid: () => number | undefined = () => undefined,
  ) {
    this.settings = registrySettings(env);
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** Claim the task's GPUs (waiting per the settings); returns what the task may use. */
  async acquire(task: PlannedTask, signal?: AbortSignal): Promise<ClaimedGpus | null> {
    if (!this.settings.enabled || !task.gpus || task.gpus.length === 0) return null;
    const pinned = Boolean(task.resources?.gpus?.indices?.length);
    const c = await claim({
      runId: this.runId,
      task: task.name,
      want: pinned ? { indices: task.gpus } : { count: task.gpus.length },
      prefer: task.gpus,
      onWait: (m) => this.log(`${task.name}: ${m}`),
      signal,
      // the settings this instance was made with (--wait-for-gpus reaches the claim through them)
      settings: this.settings,
      keeper: keeperOf(this.keeperPid()),
    });
    this.claims.set(task.name, c);
    if (c.reaped.length)
      this.log(`${task.name}: reaped ${c.reaped.length} GPU reservation(s) of dead sflow runs`);
    for (const i of c.ignored) {
      if (this.ignoredSeen.has(i.file)) continue;
      this.ignoredSeen.add(i.file);
      this.log(
        `${task.name}: ignored GPU reservation record ${escapeControls(i.file)}: ${escapeControls(i.why)}`,
      );
    }
    return { indices: c.indices, uuids: c.uuids };
  }

  /** `release_after: task_ready`: later tasks of this run may take the GPUs. */
  async ready(task: PlannedTask): Promise<void> {
    const c = this.claims.get(task.name);
    if (c && task.releaseAfter.gpus === 'task_ready') await lend(c);
  }

  async done(taskName: string): Promise<void> {
    const c = this.claims.get(taskName);
    if (!c) return;
    this.claims.delete(taskName);
    await release(c);
  }

  /** Run end (every path): drop whatever is left; bounded, never throws. */
  async releaseAll(): Promise<void> {
    const left = [...this.claims.keys()];
    await Promise.all(left.map((t) => this.done(t)));
    await releaseRun(this.runId, this.settings.dir).catch(() => 0);
  }
}
