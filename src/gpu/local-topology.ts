/**
 * GPUs of this machine, from nvidia-smi (bounded), queried once per process: the local backend
 * reads their UUIDs (for the reservation registry) and, unless `gpus_per_node` is declared, the
 * capacity (src/backends/local/gpus.ts). Without nvidia-smi there is nothing to read.
 */
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
