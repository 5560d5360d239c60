/**
 * `sflow batch` (cli.md §9.2, artifacts-batch.md Part C): an sbatch script that runs a workflow
 * as a Slurm job — to stdout, or to `-o/--sbatch-path` (mode 755, with the composed recipe beside
 * it) and, with `--submit`, submitted with `sbatch`. Every job is validated first like a real run
 * would be (nothing is written when it fails); `--bulk-input CSV` makes one job per row
 * (cli/batch-bulk.ts); `--bulk-submit PATH…` one job per self-contained recipe (cli/batch-bulk-submit.ts).
 * Partition, account, time, job name and extra lines: a flag, else the recipe's Slurm backend,
 * else (partition, account) `sinfo` / `sacctmgr` (cli/batch-allocation.ts); the script says which.
 */
import { resolve } from 'node:path';
import { batchScheduler } from '../backends/registry.js';
import { SflowError } from '../util/sflow-error.js';
import { parseTaskMonitorFlag } from '../config/monitor-flags.js';
import { AllocationResolver } from './batch-allocation.js';
import { batchScript, composedPathFor, sflowInvocation, type BatchScriptInput } from './batch-script.js';
import {
  ensureLogDirs,
  invalidJob,
  recipeField,
  writeJob,
  type BatchCommon,
  type BatchSetup,
  validateSetupJob,
  type ValidJob,
} from './batch-job.js';
import { inputFiles } from './common.js';
import { reportError } from './errors.js';
import { VERSION } from './version.js';
import { loadRecipe } from '../config/load.js';
import { SECRET_ENV_PREFIX } from '../config/secret-variables.js';
import { howToGiveSecrets, loadWithSecrets, promptedSecrets, secretSources } from './secrets.js';

/** a command-line mistake: exit 2 (README, Exit codes) */
const usage = (code: string, message: string, hint?: string) =>
  new SflowError(code, message, { phase: 'usage', ...(hint ? { hint } : {}) });
const warn = (s: string) => process.stderr.write(`⚠ ${s}\n`);

function count(v: unknown, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw usage('batch.count', `${flag} ${String(v)}: expected a positive integer`);
  return n;
}

/** `--secret-file NAME=PATH` with PATH absolute (the job starts in the workspace folder) */
function absoluteSecretFiles(opts: Record<string, unknown>): string[] {
  return ((opts.secretFile as string[] | undefined) ?? []).map((a) => {
    const i = a.indexOf('=');
    return i > 0 ? `${a.slice(0, i)}=${resolve(a.slice(i + 1))}` : a;
  });
}

async function setup(opts: Record<string, unknown>): Promise<BatchSetup> {
  const cwd = process.cwd();
  const workspaceDir = resolve(String(opts.workspaceDir ?? cwd));
  const outputDir = resolve(workspaceDir, String(opts.outputDir ?? 'sflow_output'));
  const common: BatchCommon = {
    workspaceDir,
    outputDir,
    skipArtifactCheck: Boolean(opts.skipArtifactCheck),
    workflowMonitor: Boolean(opts.enableWorkflowMonitor),
    taskMonitors: parseTaskMonitorFlag((opts.enableTaskMonitor as string[] | undefined) ?? []),
    secrets: secretSources(opts),
  };
  const logs = resolve(cwd, 'sflow_output');
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  // partition and account: a flag, else each job's recipe, else Slurm (asked once, when needed)
  const alloc = new AllocationResolver(
    {
      ...(text(opts.partition) ? { partition: text(opts.partition) } : {}),
      ...(text(opts.account) ? { account: text(opts.account) } : {}),
      ...(text(opts.time) ? { time: text(opts.time) } : {}),
      ...(text(opts.jobName) ? { jobName: text(opts.jobName) } : {}),
      extra: (opts.sbatchExtraArgs as string[] | undefined) ?? [],
    },
    {
      partition: () => batchScheduler().defaultPartition(),
      account: () => batchScheduler().defaultAccount(),
      source: (field) =>
        field === 'partition' ? 'sinfo (the default partition)' : 'sacctmgr (your association)',
    },
    warn,
  );
  return {
    common,
    alloc,
    cliSets: (opts.set as string[] | undefined) ?? [],
    cliArtifacts: (opts.artifact as string[] | undefined) ?? [],
    cliMissable: (opts.missableTasks as string[] | undefined) ?? [],
    nodes: count(opts.nodes, '--nodes'),
    gpusPerNode: count(opts.gpusPerNode, '--gpus-per-node'),
    base: {
      sflow: await sflowInvocation(),
      version: VERSION,
      output: resolve(String(opts.sbatchOutput ?? `${logs}/%j-sflow-submit.out`)),
      error: resolve(String(opts.sbatchError ?? `${logs}/%j-sflow-submit.err`)),
      workspaceDir,
      outputDir,
      ...(typeof opts.logLevel === 'string' ? { logLevel: opts.logLevel } : {}),
      secretFiles: absoluteSecretFiles(opts),
      skipArtifactCheck: common.skipArtifactCheck,
      workflowMonitor: common.workflowMonitor,
      taskMonitors: common.taskMonitors,
    },
  };
}

/** `partition debug, nodes 2, 1 extra line`: what the job took from its recipe (no flag given) */
function recipeSettings(i: BatchScriptInput): string {
  const a = i.alloc;
  const recipe = (v: { from: string } | undefined) => v?.from.startsWith('the recipe') ?? false;
  const parts = [
    ...(['partition', 'account', 'time'] as const)
      .filter((k) => recipe(a[k]))
      .map((k) => `${k} ${a[k]!.value}`),
    ...(recipe(a.jobName) ? [`job name ${a.jobName.value}`] : []),
    ...(i.nodesFrom?.startsWith('the recipe') ? [`nodes ${i.nodes}`] : []),
  ];
  const extra = a.extra.filter(recipe).length;
  if (extra) parts.push(`${extra} extra #SBATCH line(s) from extra_args`);
  return parts.join(', ');
}

async function single(positional: string[], opts: Record<string, unknown>, s: BatchSetup): Promise<number> {
  if (opts.submit && !opts.sbatchPath && !opts.dryRun)
    throw usage(
      'batch.submit_needs_path',
      '--submit needs -o/--sbatch-path (where to write the script sbatch runs)',
    );
  const files = inputFiles(positional, opts, 'sflow.yaml').map((f) => resolve(f));
  let job: ValidJob;
  try {
    // secrets without a value are asked for on a terminal; the answers reach the job only through
    // sbatch's environment (never the script), so they need --submit
    await loadWithSecrets(
      () =>
        loadRecipe({
          files,
          set: s.cliSets,
          artifacts: s.cliArtifacts,
          missable: s.cliMissable,
          secrets: s.common.secrets,
        }),
      opts,
      'cannot write the job',
    );
    const prompted = Object.keys(promptedSecrets(opts));
    if (prompted.length && !(opts.submit && !opts.dryRun))
      throw new SflowError(
        'batch.prompted_secret',
        `a secret typed at the prompt (${prompted.join(', ')}) reaches the job only when sflow submits it (--submit): it is never written into the script`,
        { phase: 'usage', hint: howToGiveSecrets(prompted) },
      );
    job = validateSetupJob(s, files, false);
  } catch (e) {
    return invalidJob(e);
  }
  for (const w of job.warnings) warn(w);
  if (job.nodes === undefined)
    throw usage(
      'batch.no_nodes',
      'cannot tell how many nodes the job needs',
      'pass --nodes/-N, or give the recipe a slurm backend with nodes:',
    );
  const path = opts.sbatchPath ? resolve(String(opts.sbatchPath)) : undefined;
  const input: BatchScriptInput = {
    ...s.base,
    files,
    // written beside the script (-o): the job runs that copy, with the overrides applied in it
    ...(path ? { composed: composedPathFor(path) } : {}),
    sets: s.cliSets,
    artifacts: s.cliArtifacts,
    missable: s.cliMissable,
    nodes: job.nodes,
    nodesFrom: s.nodes !== undefined ? '-N/--nodes' : recipeField(job, 'nodes'),
    alloc: await s.alloc.forJob(job.backend),
    ...(job.gpusPerNode !== undefined ? { gpusPerNode: job.gpusPerNode } : {}),
  };
  const fromRecipe = recipeSettings(input);
  if (fromRecipe)
    process.stderr.write(`ℹ from the recipe's slurm backend '${job.backend.name}': ${fromRecipe}\n`);
  const script = batchScript(input);
  process.stderr.write('✓ dry-run validation passed\n');
  if (opts.dryRun) {
    process.stdout.write(script);
    process.stderr.write('ℹ --dry-run: nothing written, nothing submitted\n');
    return 0;
  }
  if (!path) {
    process.stdout.write(script);
    process.stderr.write('ℹ add -o/--sbatch-path FILE to write it (and --submit to submit it)\n');
    return 0;
  }
  const composed = writeJob(path, script, job, Boolean(opts.resolve));
  process.stdout.write(`✓ sbatch script: ${path}\n  composed recipe: ${composed}\n`);
  if (!opts.submit) return 0;
  ensureLogDirs(input);
  // values typed at the prompt go to the job in sbatch's environment (sbatch exports it)
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(promptedSecrets(opts))) env[`${SECRET_ENV_PREFIX}${k}`] = v;
  const scheduler = batchScheduler();
  const r = await scheduler.submit(path, scheduler.local(env));
  if ('error' in r) {
    process.stderr.write(`✗ sbatch failed: ${r.error}\n`);
    return 1;
  }
  process.stdout.write(
    `✓ ${r.output}\n  watch it: squeue -j ${r.jobId}; cancel it: scancel ${r.jobId}; follow it: tail -f ${input.output.replace('%j', r.jobId)}\n`,
  );
  return 0;
}

export async function batchCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    if ((opts.row as string[] | undefined)?.length && !opts.bulkInput)
      throw usage('batch.row_needs_bulk', '--row selects rows of --bulk-input; there is no --bulk-input');
    const s = await setup(opts);
    if (opts.bulkInput && (opts.bulkSubmit as string[] | undefined)?.length)
      throw usage('batch.two_modes', '--bulk-input and --bulk-submit are two different modes: pick one');
    if ((opts.bulkSubmit as string[] | undefined)?.length) {
      const { batchBulkSubmit } = await import('./batch-bulk-submit.js');
      return await batchBulkSubmit(positional, opts, s);
    }
    if (opts.bulkInput) {
      const { batchBulk } = await import('./batch-bulk.js');
      return await batchBulk(positional, opts, s);
    }
    return await single(positional, opts, s);
  } catch (e) {
    return reportError(e);
  }
}
