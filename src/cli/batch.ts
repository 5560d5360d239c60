/**
 * `sflow batch` (cli.md §9.2, artifacts-batch.md Part C): an sbatch script that runs a workflow
 * as a Slurm job — to stdout, or to `-o/--sbatch-path` (mode 755, with the composed recipe beside
 * it) and, with `--submit`, submitted with `sbatch`. Every job is validated first like a real run
 * would be (nothing is written when it fails); `--bulk-input CSV` makes one job per row
 * (cli/batch-bulk.ts); `--bulk-submit PATH…` one job per self-contained recipe (cli/batch-bulk-submit.ts). Partition and account come from `-p/-A`, else from `sinfo` / `sacctmgr`.
 */
import { resolve } from 'node:path';
import { detectAccount, detectPartition, submitBatch } from '../backends/slurm/batch-env.js';
import { SflowError } from '../config/errors.js';
import { parseTaskMonitorFlag } from '../config/monitor-flags.js';
import { batchScript, sflowInvocation, type BatchScriptInput } from './batch-script.js';
import {
  ensureLogDirs,
  validateJob,
  validationFailure,
  writeJob,
  type BatchCommon,
  type BatchSetup,
  type ValidJob,
} from './batch-job.js';
import { inputFiles } from './common.js';
import { reportError } from './errors.js';
import { VERSION } from './version.js';
import { loadRecipe } from '../config/load.js';
import { SECRET_ENV_PREFIX } from '../config/secret-variables.js';
import { slurmExec } from '../backends/slurm/slurm-exec.js';
import { howToGiveSecrets, loadWithSecrets, promptedSecrets, secretSources } from './secrets.js';

const usage = (code: string, message: string, hint?: string, exitCode = 1) =>
  new SflowError(code, message, { phase: 'usage', exitCode, ...(hint ? { hint } : {}) });
const warn = (s: string) => process.stderr.write(`⚠ ${s}\n`);

function count(v: unknown, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw usage('batch.count', `${flag} ${String(v)}: expected a positive integer`, undefined, 2);
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
  const detected = async (flag: string, given: unknown, detect: () => Promise<string | undefined>) => {
    if (typeof given === 'string' && given) return given;
    const v = await detect();
    if (!v)
      throw usage(
        `batch.no_${flag}`,
        `no --${flag} given and none could be detected`,
        flag === 'partition'
          ? 'pass --partition/-p (sinfo found no partition)'
          : 'pass --account/-A (sacctmgr found no association for you)',
      );
    warn(`using ${flag} '${v}' (auto-detected; pass --${flag} to choose)`);
    return v;
  };
  // detection happens before any mode runs, as in nv-sflow
  const partition = await detected('partition', opts.partition, () => detectPartition());
  const account = await detected('account', opts.account, () => detectAccount());
  const common: BatchCommon = {
    workspaceDir,
    outputDir,
    skipArtifactCheck: Boolean(opts.skipArtifactCheck),
    workflowMonitor: Boolean(opts.enableWorkflowMonitor),
    taskMonitors: parseTaskMonitorFlag((opts.enableTaskMonitor as string[] | undefined) ?? []),
    secrets: secretSources(opts),
  };
  const logs = resolve(cwd, 'sflow_output');
  return {
    common,
    partition,
    account,
    jobName: String(opts.jobName ?? 'sflow'),
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
      partition,
      account,
      ...(typeof opts.time === 'string' ? { time: opts.time } : {}),
      extra: (opts.sbatchExtraArgs as string[] | undefined) ?? [],
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
    job = validateJob(
      {
        files,
        sets: s.cliSets,
        artifacts: s.cliArtifacts,
        missable: s.cliMissable,
        ...(s.nodes !== undefined ? { nodes: s.nodes } : {}),
        ...(s.gpusPerNode !== undefined ? { gpusPerNode: s.gpusPerNode } : {}),
        bulk: false,
      },
      s.common,
    );
  } catch (e) {
    process.stderr.write(`✗ Configuration error: ${validationFailure(e)}\n`);
    process.stderr.write('✗ Aborting sbatch generation: the workflow does not pass its dry-run validation\n');
    return 1;
  }
  for (const w of job.warnings) warn(w);
  if (job.nodes === undefined)
    throw usage(
      'batch.no_nodes',
      'cannot tell how many nodes the job needs',
      'pass --nodes/-N, or give the recipe a slurm backend with nodes:',
    );
  if (s.nodes === undefined)
    process.stderr.write(`ℹ nodes: ${job.nodes} (from the recipe's slurm backend)\n`);
  const input: BatchScriptInput = {
    ...s.base,
    files,
    sets: s.cliSets,
    artifacts: s.cliArtifacts,
    missable: s.cliMissable,
    nodes: job.nodes,
    jobName: s.jobName,
    ...(job.gpusPerNode !== undefined ? { gpusPerNode: job.gpusPerNode } : {}),
  };
  const script = batchScript(input);
  process.stderr.write('✓ dry-run validation passed\n');
  if (opts.dryRun) {
    process.stdout.write(script);
    process.stderr.write('ℹ --dry-run: nothing written, nothing submitted\n');
    return 0;
  }
  if (!opts.sbatchPath) {
    process.stdout.write(script);
    process.stderr.write('ℹ add -o/--sbatch-path FILE to write it (and --submit to submit it)\n');
    return 0;
  }
  const path = resolve(String(opts.sbatchPath));
  const composed = writeJob(path, script, job, Boolean(opts.resolve));
  process.stdout.write(`✓ sbatch script: ${path}\n  composed recipe: ${composed}\n`);
  if (!opts.submit) return 0;
  ensureLogDirs(input);
  // values typed at the prompt go to the job in sbatch's environment (sbatch exports it)
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(promptedSecrets(opts))) env[`${SECRET_ENV_PREFIX}${k}`] = v;
  const r = await submitBatch(path, slurmExec(env));
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
