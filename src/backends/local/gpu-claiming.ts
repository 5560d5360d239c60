/**
 * The local backend on a machine with real GPUs: before a GPU task starts, its cards are claimed in
 * the cross-process reservation registry (src/gpu), so concurrent sflow runs on one box get
 * disjoint GPUs; the task sees the claimed indices in CUDA_VISIBLE_DEVICES; the claim is released
 * when the attempt ends (and, as a backstop, when the run ends).
 */
import type { ExitStatus, LaunchContext, TaskHandle } from '../backend.js';
import type { PlannedBackend, PlannedTask } from '../../plan/types.js';
import type { TaskGpuClaims } from '../../gpu/task-claims.js';
import { LocalBackend } from './local-backend.js';

export class GpuClaimingLocalBackend extends LocalBackend {
  constructor(
    planned: PlannedBackend,
    private readonly claims: TaskGpuClaims,
  ) {
    super(planned);
  }

  override async launch(task: PlannedTask, ctx: LaunchContext): Promise<TaskHandle> {
    const got = await this.claims.acquire(task);
    if (!got) return super.launch(task, ctx);
    // the registry's grant is this host's plan for the task: SFLOW_GPU_PLAN follows it
    const env = {
      ...ctx.env,
      CUDA_VISIBLE_DEVICES: got.indices.join(','),
      SFLOW_GPU_PLAN: got.indices.join(','),
    };
    try {
      const handle = await super.launch(task, { ...ctx, env });
      handle.ids.gpus = got.indices.join(',');
      handle.ids.gpuUuids = got.uuids;
      return handle;
    } catch (e) {
      await this.claims.done(task.name);
      throw e;
    }
  }

  override async wait(handle: TaskHandle): Promise<ExitStatus> {
    try {
      return await super.wait(handle);
    } finally {
      await this.claims.done(handle.task);
    }
  }

  override async release(): Promise<void> {
    await this.claims.releaseAll();
    await super.release();
  }
}
