/** `sflow run`: load → plan → (dry-run: print) → allocate → execute. */
import { loadRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import { makeRunId } from '../plan/run-id.js';
import { checkArtifactPaths } from '../preflight/artifacts.js';
import { inputFiles, loadOptions, printWarnings } from './common.js';
import { reportError } from './errors.js';
import type { Plan } from '../plan/types.js';

/** Local GPU tasks: nvidia-smi tells the GPUs' UUIDs (and their count when gpus_per_node is not declared). */
export function needsLocalGpuDiscovery(plan: Plan): boolean {
  const local = new Set(plan.backends.filter((b) => b.type === 'local').map((b) => b.name));
  return plan.tasks.some((t) => local.has(t.backend) && t.resources?.gpus !== undefined);
}

export async function runCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const files = inputFiles(positional, opts, 'sflow.yaml');
    const loaded = loadRecipe(loadOptions(files, opts));
    const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
    const workspaceDir = (opts.workspaceDir as string | undefined) ?? process.cwd();
    const common = { workspaceDir, outputDir: opts.outputDir as string | undefined };
    if (opts.dryRun) {
      if (opts.tui) process.stderr.write('ℹ --tui is ignored with --dry-run\n');
      printWarnings(loaded.warnings);
      let plan = buildPlan(loaded, { ...common, dryRun: true, runId: makeRunId(workflow) });
      if (needsLocalGpuDiscovery(plan)) {
        const { discoverLocalTopology } = await import('../gpu/local-topology.js');
        const topology = await discoverLocalTopology(plan.backends);
        if (Object.keys(topology).length)
          plan = buildPlan(loaded, { ...common, dryRun: true, runId: plan.runId, topology });
      }
      for (const w of checkArtifactPaths(loaded, workspaceDir, Boolean(opts.skipArtifactCheck)))
        plan.warnings.push(w);
      const { credentialWarnings } = await import('../uploads/credentials.js');
      plan.warnings.push(...credentialWarnings(plan));
      const { renderDryRun } = await import('../plan/render.js');
      process.stdout.write(renderDryRun(plan, { ...loaded, warnings: [] }) + '\n');
      process.stdout.write('✓ Configuration is valid\n');
      return 0;
    }
    printWarnings(loaded.warnings);
    const runId = makeRunId(workflow);
    // trial plan against placeholders: every plan error fires before anything is allocated
    const trial = buildPlan(loaded, { ...common, dryRun: false, runId });
    for (const w of checkArtifactPaths(loaded, workspaceDir, Boolean(opts.skipArtifactCheck)))
      process.stderr.write(`⚠ ${w}\n`);
    const { refuseUnimplementedArtifacts } = await import('../artifacts/stage.js');
    refuseUnimplementedArtifacts(trial); // hf:// and docker:// stop here, before any allocation
    const { executeRecipe } = await import('./run-execute.js');
    return await executeRecipe(loaded, trial, {
      ...common,
      runId,
      logLevel: String(opts.logLevel ?? 'info'),
      opts,
    });
  } catch (e) {
    return reportError(e);
  }
}
