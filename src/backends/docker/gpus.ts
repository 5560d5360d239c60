/**
 * GPUs on one Docker host (backends.md §3.6–3.7): the machine's cards from nvidia-smi (their
 * UUIDs), claimed per task in the shared reservation registry (src/gpu), so concurrent runs on one
 * box get disjoint cards; the container gets them as `--gpus "device=<uuid,…>"`. The registry is
 * skipped (and the container pinned to the planned indices) for pools, `nodes > 1`, no nvidia-smi
 * and `SFLOW_GPU_RESERVATION=0`, each said once in the run's log.
 */
import { localGpus } from '../../gpu/local-topology.js';
import { parseWaitForGpus, registrySkipReason } from '../../gpu/settings.js';
import { TaskGpuClaims } from '../../gpu/task-claims.js';
import type { PlannedNode } from '../../plan/types.js';
import type { BackendContext } from '../backend.js';

/** This machine's GPUs on the single host's node (unchanged when nvidia-smi finds none). */
export async function withHostGpus(nodes: PlannedNode[], declared: number | null): Promise<PlannedNode[]> {
  const gpus = await localGpus();
  if (!gpus || gpus.length === 0) return nodes;
  const uuids = [...gpus].sort((x, y) => x.index - y.index).map((g) => g.uuid);
  return nodes.map((n) => ({ ...n, numGpus: declared ?? gpus.length, gpuUuids: uuids }));
}

/** The registry claims of this run on the host's GPUs, or undefined (the reason is logged). */
export function hostGpuClaims(
  nodes: PlannedNode[],
  pool: boolean,
  ctx: BackendContext,
  backendWait: unknown,
): TaskGpuClaims | undefined {
  if (!ctx.gpuTasks) return undefined;
  const skip = registrySkipReason({
    env: ctx.env,
    nodes: nodes.length,
    pool,
    nvidiaSmi: nodes.some((n) => n.gpuUuids?.length),
  });
  if (skip) {
    ctx.log(`${skip}; containers get the planned GPU indices`);
    return undefined;
  }
  const env = { ...ctx.env };
  const wait = ctx.options.waitForGpus;
  if (typeof wait === 'string')
    env.SFLOW_WAIT_FOR_GPUS = String(parseWaitForGpus(wait, '--wait-for-gpus', 'usage'));
  else if (env.SFLOW_WAIT_FOR_GPUS === undefined && typeof backendWait === 'number')
    env.SFLOW_WAIT_FOR_GPUS = String(backendWait);
  const claims = new TaskGpuClaims(ctx.runId, (m) => ctx.log(m), env);
  return claims.enabled ? claims : undefined;
}

/** what the container sees: its cards renumbered from 0 */
export const containerDeviceIndices = (n: number): string => Array.from({ length: n }, (_, i) => i).join(',');
