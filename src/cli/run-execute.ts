/**
 * A real run after the trial plan: allocate each backend (local: synthetic nodes), re-plan
 * against the real topology, then hand the Plan to the runtime.
 */
import type { LoadedRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import type { Plan, PlannedNode } from '../plan/types.js';
import { needsLocalGpuDiscovery } from './run.js';

export async function executeRecipe(
  loaded: LoadedRecipe,
  trial: Plan,
  o: { workspaceDir: string; outputDir?: string; runId: string; logLevel: string; opts: Record<string, unknown> },
): Promise<number> {
  const topology: Record<string, PlannedNode[]> = {};
  for (const b of trial.backends) {
    if (b.type !== 'local') {
      const { SflowError } = await import('../config/errors.js');
      throw new SflowError('run.backend_unavailable', `backend '${b.name}' (${b.type}) cannot run yet in this version of sflow; use --dry-run to see its plan`, {
        phase: 'preflight',
        hint: 'the local backend runs today; docker, slurm and kubernetes are planned',
      });
    }
    topology[b.name] = b.nodes;
  }
  if (needsLocalGpuDiscovery(trial)) {
    const { discoverLocalTopology } = await import('../gpu/local-topology.js');
    Object.assign(topology, await discoverLocalTopology(trial.backends));
  }
  const plan = buildPlan(loaded, { workspaceDir: o.workspaceDir, outputDir: o.outputDir, dryRun: false, runId: o.runId, topology });
  const { executePlan } = await import('../runtime/run.js');
  const r = await executePlan(plan, { cwd: process.cwd(), logLevel: o.logLevel, console: true, handleSignals: true, warnings: loaded.warnings.map((w) => w.message) });
  return r.exitCode;
}
