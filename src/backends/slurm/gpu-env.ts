/**
 * What GPU steps on Slurm need beyond the plan: the allocation's GPU UUIDs per node (probed once
 * at allocation), the settings every step gets to match them, and the in-step GPU selection
 * prelude staged in the run folder (`sh/gpu-select.sh`; POSIX sh, compute nodes may lack Node).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAsset } from '../../config/assets.js';
import { GPU_PRELUDE_FILE } from '../../operators/srun-step.js';
import type { PlannedNode } from '../../plan/types.js';
import { errorMessage } from '../../util/errors.js';
import { probeGpuTopology } from './nodes.js';
import type { SlurmExec } from './slurm-exec.js';

/** GPU settings of one step: the plan, the node size, and the UUID tables the prelude matches */
export function stepGpuEnv(
  allocated: readonly PlannedNode[],
  nodes: readonly PlannedNode[],
  gpus: number[] | null,
): Record<string, string> {
  const env: Record<string, string> = { SFLOW_GPU_PLAN: gpus?.length ? gpus.join(',') : '' };
  if (!gpus?.length) return env;
  const count = nodes[0]?.numGpus;
  if (count !== null && count !== undefined) env.SFLOW_NODE_GPU_COUNT = String(count);
  const byNode = allocated
    .filter((n) => nodes.some((t) => t.name === n.name) && n.gpuUuids?.length)
    .map((n) => `${n.name}=${n.gpuUuids!.join(',')}`);
  if (byNode.length) env.SFLOW_GPU_UUIDS_BY_NODE = byNode.join(';');
  return env;
}

/** the job's nodes with the GPU UUIDs the probe found; where it found none, says so */
export async function withGpuTopology(
  exec: SlurmExec,
  log: (line: string) => void,
  jobId: string,
  nodes: PlannedNode[],
  signal: AbortSignal,
): Promise<PlannedNode[]> {
  const topo = await probeGpuTopology(exec, jobId, nodes, signal);
  if (topo.missing.length)
    log(
      `GPU topology probe: no GPU UUIDs for ${topo.missing.join('; ')} — in-step GPU selection falls back to index arithmetic there`,
    );
  return nodes.map((n) => (topo.uuids.has(n.name) ? { ...n, gpuUuids: topo.uuids.get(n.name) } : n));
}

/** the in-step GPU selection prelude, staged in the run folder that every step can read */
export function stagePrelude(runDir: string, log: (line: string) => void): void {
  try {
    writeFileSync(join(runDir, GPU_PRELUDE_FILE), readAsset('sh/gpu-select.sh'), { mode: 0o644 });
  } catch (e) {
    log(
      `cannot stage the in-step GPU selection script in ${runDir}: ${errorMessage(e)}; GPU steps will exit 97`,
    );
  }
}
