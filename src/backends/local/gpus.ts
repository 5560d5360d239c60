/**
 * The local backend on a machine with real GPUs: allocation reads them from nvidia-smi (their
 * UUIDs; the count unless `gpus_per_node` is declared), and before a GPU task starts its cards are
 * claimed in the cross-process reservation registry (src/gpu), so concurrent sflow runs on one
 * box get disjoint GPUs. The claim ends with the attempt, `release_after: task_ready` lends it at
 * READY, and release drops whatever is left.
 */
import { localGpus } from '../../gpu/local-topology.js';
import { parseWaitForGpus, registrySkipReason } from '../../gpu/settings.js';
import { TaskGpuClaims } from '../../gpu/task-claims.js';
import type { PlannedNode } from '../../plan/types.js';
import type { BackendContext } from '../backend.js';
import { launcherPid } from '../../util/launcher/client.js';

/** This machine's GPUs on every synthetic node (nodes unchanged when nvidia-smi finds none). */
export async function withMachineGpus(nodes: PlannedNode[], declared: number | null): Promise<PlannedNode[]> {
  const gpus = await localGpus();
  if (!gpus || gpus.length === 0) return nodes;
  const uuids = [...gpus].sort((x, y) => x.index - y.index).map((g) => g.uuid);
  return nodes.map((n) => ({ ...n, numGpus: declared ?? gpus.length, gpuUuids: uuids }));
}

/** The claims of a run on physical GPUs, or undefined when the registry does not apply. */
export function gpuClaimsFor(nodes: PlannedNode[], ctx: BackendContext): TaskGpuClaims | undefined {
  if (!nodes.some((n) => n.gpuUuids?.length)) return undefined;
  // synthetic multi-node local backends share one machine's cards: the registry serves single-host backends only
  const skip = registrySkipReason({ nodes: nodes.length, pool: false, nvidiaSmi: true });
  if (skip) {
    ctx.log(skip);
    return undefined;
  }
  const env = { ...ctx.env };
  const wait = ctx.options.waitForGpus;
  if (typeof wait === 'string')
    env.SFLOW_WAIT_FOR_GPUS = String(parseWaitForGpus(wait, '--wait-for-gpus', 'usage'));
  // the launcher keeps the claims of a killed driver until it has stopped every task group
  const claims = new TaskGpuClaims(ctx.runId, (m) => ctx.log(m), env, launcherPid);
  return claims.enabled ? claims : undefined;
}
