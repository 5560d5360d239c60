/** `sflow run`: load → plan → (dry-run: print) → allocate → execute. */
import { SflowError } from '../util/sflow-error.js';
import { loadRecipe } from '../config/load.js';
import { applyMonitorFlags } from '../config/monitor-flags.js';
import { buildPlan } from '../plan/build.js';
import { makeRunId } from '../plan/run-id.js';
import { checkArtifactPaths } from '../preflight/artifacts.js';
import { parseWaitForGpus } from '../gpu/settings.js';
import { inputFiles, printWarnings } from './common.js';
import { loadWithSecrets, runLoadOptions, warnSecretsOnCommandLine } from './secrets.js';
import { reportError } from './errors.js';
import { runPreflight } from './run-preflight.js';
import {
  applyBackendRunFlags,
  backendCatalog,
  discoverTopology,
  dryRunDetails,
  notRunnableError,
  unrunnableBackends,
} from '../backends/registry.js';
import { cliOptionBag } from '../util/cli-options.js';
import { warmLauncher } from '../util/launcher/client.js';

export async function runCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  if (opts.resume !== undefined) {
    const { resumeCommand } = await import('./run-resume.js');
    return resumeCommand(positional, opts);
  }
  try {
    if (opts.force)
      throw new SflowError('cli.force_without_resume', '--force is only meaningful with --resume', {
        phase: 'usage',
        hint: 'sflow run --resume <run dir> --force',
      });
    // a malformed --wait-for-gpus is a usage error, also with --dry-run (the backend applies it)
    if (typeof opts.waitForGpus === 'string') parseWaitForGpus(opts.waitForGpus, '--wait-for-gpus', 'usage');
    const files = inputFiles(positional, opts, 'sflow.yaml');
    // a real run needs the task launcher (tasks, the run's reaper): it starts on the other core
    // while this one loads and plans the recipe
    if (!opts.dryRun) warmLauncher();
    const load = () => loadRecipe(runLoadOptions(files, opts));
    // a dry-run asks for nothing: a secret without a value is shown masked like the others
    const loaded = opts.dryRun ? load() : await loadWithSecrets(load, opts, 'cannot run');
    warnSecretsOnCommandLine(loaded, (w) => loaded.warnings.push({ message: w }));
    // each backend type's own flags (-e, --extra-docker-args) and a batch job's environment
    const options = cliOptionBag(opts);
    for (const w of applyBackendRunFlags(loaded.recipe, options)) loaded.warnings.push({ message: w });
    applyMonitorFlags(loaded.recipe, {
      workflow: Boolean(opts.enableWorkflowMonitor),
      tasks: (opts.enableTaskMonitor as string[] | undefined) ?? [],
    });
    const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
    const workspaceDir = (opts.workspaceDir as string | undefined) ?? process.cwd();
    const common = { workspaceDir, outputDir: opts.outputDir as string | undefined };
    if (opts.dryRun) {
      if (opts.tui) process.stderr.write('ℹ --tui is ignored with --dry-run\n');
      printWarnings(loaded.warnings);
      const base = { ...common, dryRun: true, catalog: backendCatalog };
      let plan = buildPlan(loaded, { ...base, runId: makeRunId(workflow) });
      // what the backends can tell without allocating (local: this machine's GPUs)
      const topology = await discoverTopology(plan, AbortSignal.timeout(30_000));
      if (Object.keys(topology).length) plan = buildPlan(loaded, { ...base, runId: plan.runId, topology });
      for (const w of checkArtifactPaths(loaded, workspaceDir, Boolean(opts.skipArtifactCheck)))
        plan.warnings.push(w);
      const { credentialWarnings } = await import('../uploads/credentials.js');
      plan.warnings.push(...credentialWarnings(plan));
      plan.warnings.push(...runPreflight(plan, loaded, opts));
      const { dryRunChunks } = await import('../plan/render.js');
      const { writePieces } = await import('../util/write-pieces.js');
      // what the backends add under each task (Kubernetes: the pod manifests, as sent)
      const taskDetail = await dryRunDetails(plan, options);
      // in pieces as rendered: 10,000 replicas are never one string
      await writePieces(process.stdout, dryRunChunks(plan, { ...loaded, warnings: [] }, { taskDetail }));
      process.stdout.write('✓ Configuration is valid\n');
      return 0;
    }
    printWarnings(loaded.warnings);
    const runId = makeRunId(workflow);
    // trial plan against placeholders: every plan error fires before anything is allocated
    const trial = buildPlan(loaded, { ...common, dryRun: false, runId, catalog: backendCatalog });
    // not-yet features (those backend types and hf:// / docker:// artifacts included) are refused
    // here, located, before anything else
    for (const w of runPreflight(trial, loaded, opts)) process.stderr.write(`⚠ ${w}\n`);
    for (const w of checkArtifactPaths(loaded, workspaceDir, Boolean(opts.skipArtifactCheck)))
      process.stderr.write(`⚠ ${w}\n`);
    const refused = unrunnableBackends(trial);
    if (refused.length) throw notRunnableError(refused[0]);
    const { executeRecipe } = await import('./run-execute.js');
    const { buildRunRecord, composedRecipeText, runInputs, secretsOf } = await import('./run-record.js');
    const inputs = runInputs(files, opts);
    return await executeRecipe(loaded, trial, {
      ...common,
      runId,
      record: {
        record: buildRunRecord(trial, inputs, {
          cwd: process.cwd(),
          workspaceDir,
          secret: secretsOf(loaded),
        }),
        recipeText: composedRecipeText(loaded, inputs),
      },
      logLevel: opts.verbose && opts.logLevel === 'info' ? 'debug' : String(opts.logLevel ?? 'info'),
      opts,
    });
  } catch (e) {
    return reportError(e);
  }
}
