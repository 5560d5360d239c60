/**
 * GPUs of this machine for the local backend, from nvidia-smi (bounded): their UUIDs (for the
 * reservation registry) and, unless `gpus_per_node` is declared, the capacity. Without nvidia-smi
 * (every machine without a GPU) a declared `gpus_per_node` is the only source.
 */
import { localNodes } from '../plan/backends.js';
import type { PlannedBackend, PlannedNode } from '../plan/types.js';
import { queryGpus, type GpuInfo } from './nvidia-smi.js';

let cached: Promise<GpuInfo[] | null> | undefined;

/** nvidia-smi's GPUs, queried once per process; null when there is no nvidia-smi. */
export function localGpus(): Promise<GpuInfo[] | null> {
  cached ??= queryGpus().catch(() => null);
  return cached;
}

export function resetLocalGpuCache(): void {
  cached = undefined;
}

/** Topology overrides for local backends whose GPU capacity comes from this machine's GPUs. */
export async function discoverLocalTopology(
  backends: PlannedBackend[],
): Promise<Record<string, PlannedNode[]>> {
  const out: Record<string, PlannedNode[]> = {};
  for (const b of backends) {
    if (b.type !== 'local') continue;
    const declared = typeof b.config.gpus_per_node === 'number' ? b.config.gpus_per_node : null;
    const gpus = await localGpus();
    if (!gpus || gpus.length === 0) continue;
    const uuids = [...gpus].sort((x, y) => x.index - y.index).map((g) => g.uuid);
    out[b.name] = localNodes(b.nodes.length, declared ?? gpus.length).map((n) => ({ ...n, gpuUuids: uuids }));
  }
  return out;
}
