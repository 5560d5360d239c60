/**
 * A real run after the trial plan: allocate each backend (local: synthetic nodes), re-plan
 * against the real topology, then hand the Plan to the runtime.
 */
import type { LoadedRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import type { Plan, PlannedBackend, PlannedNode } from '../plan/types.js';
import type { RunEvent } from '../runtime/events.js';
import { needsLocalGpuDiscovery } from './run.js';

export async function executeRecipe(
  loaded: LoadedRecipe,
  trial: Plan,
  o: {
    workspaceDir: string;
    outputDir?: string;
    runId: string;
    logLevel: string;
    opts: Record<string, unknown>;
  },
): Promise<number> {
  const topology: Record<string, PlannedNode[]> = {};
  for (const b of trial.backends) {
    if (b.type !== 'local') {
      const { SflowError } = await import('../config/errors.js');
      throw new SflowError(
        'run.backend_unavailable',
        `backend '${b.name}' (${b.type}) cannot run yet in this version of sflow; use --dry-run to see its plan`,
        {
          phase: 'preflight',
          hint: 'the local backend runs today; docker, slurm and kubernetes are planned',
        },
      );
    }
    topology[b.name] = b.nodes;
  }
  if (needsLocalGpuDiscovery(trial)) {
    const { discoverLocalTopology } = await import('../gpu/local-topology.js');
    Object.assign(topology, await discoverLocalTopology(trial.backends));
  }
  const plan = buildPlan(loaded, {
    workspaceDir: o.workspaceDir,
    outputDir: o.outputDir,
    dryRun: false,
    runId: o.runId,
    topology,
  });
  const { executePlan } = await import('../runtime/run.js');
  const staged = await import('./run-stage.js').then((m) => m.stageRun(loaded, plan));
  const gpu = await gpuClaiming(plan, o.opts);
  const r = await executePlan(plan, {
    cwd: process.cwd(),
    logLevel: o.logLevel,
    console: true,
    taskOutput: echoTaskOutput(),
    handleSignals: true,
    warnings: [...loaded.warnings.map((w) => w.message), ...staged.warnings],
    ...(staged.uploads ? { uploads: staged.uploads } : {}),
    ...(gpu ? { backendFactories: gpu.factories, onEvent: gpu.onEvent } : {}),
  });
  return r.exitCode;
}

/**
 * Task output is echoed to the console on an interactive terminal only (as nv-sflow 0.3 does:
 * without a TTY it goes only to the task logs); SFLOW_TASK_OUTPUT=always|never overrides.
 */
function echoTaskOutput(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.SFLOW_TASK_OUTPUT ?? 'auto').toLowerCase();
  if (v === 'always' || v === '1') return true;
  if (v === 'never' || v === '0') return false;
  return Boolean(process.stdout.isTTY);
}

/**
 * Local backends whose nodes carry GPU UUIDs (nvidia-smi found real GPUs) claim their tasks' GPUs
 * in the cross-process reservation registry (SFLOW_GPU_RESERVATION=0 turns it off).
 */
async function gpuClaiming(plan: Plan, opts: Record<string, unknown>) {
  const physical = plan.backends.filter((b) => b.type === 'local' && b.nodes.some((n) => n.gpuUuids?.length));
  if (physical.length === 0) return undefined;
  const { parseWaitForGpus, registrySkipReason } = await import('../gpu/settings.js');
  // synthetic multi-node local backends share one machine's cards: the registry serves single-host backends only
  const skip = registrySkipReason({
    nodes: Math.max(...physical.map((b) => b.nodes.length)),
    pool: false,
    nvidiaSmi: true,
  });
  if (skip) {
    process.stderr.write(`⚠ ${skip}\n`);
    return undefined;
  }
  if (typeof opts.waitForGpus === 'string') {
    process.env.SFLOW_WAIT_FOR_GPUS = String(parseWaitForGpus(opts.waitForGpus, '--wait-for-gpus', 'usage'));
  }
  const { TaskGpuClaims } = await import('../gpu/task-claims.js');
  const { GpuClaimingLocalBackend } = await import('../backends/local/gpu-claiming.js');
  const claims = new TaskGpuClaims(plan.runId, (m) => process.stderr.write(`⏳ ${m}\n`));
  if (!claims.enabled) return undefined;
  const byName = new Map(plan.tasks.map((t) => [t.name, t]));
  return {
    factories: { local: (b: PlannedBackend) => new GpuClaimingLocalBackend(b, claims) },
    onEvent: (e: RunEvent) => {
      if (e.type === 'task_ready') {
        const t = byName.get(e.task);
        if (t) void claims.ready(t);
      }
    },
  };
}
