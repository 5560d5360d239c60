/**
 * `sflow batch --ssh '<host> [ssh options]' --submit` (spec cli.md §9.1, §9.2): validate and compose
 * here (every error before anything is sent), get the remote ready as `run --ssh` does (a matching
 * sflow: PATH, cached copy, or this build's single executable copied), then one ssh call uploads the
 * composed recipe, the local inputs and the generated script into the session folder and runs
 * `sbatch` there. Partition, account, time, job name and extra lines: a flag, else the recipe's
 * Slurm backend, else (partition, account) detection over ssh. The job writes the session's
 * files like a remote controller does (output/controller.log, the run folder under output/,
 * state/exit.json when the job ends), so the receipt works with `sflow watch` and `sflow fetch`.
 * `--dry-run` prints the script without connecting. Bulk modes are refused with --ssh.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { batchScheduler } from '../backends/registry.js';
import type { SchedulerCall } from '../backends/kind.js';
import { reportError } from './errors.js';
import { batchScript, type BatchScriptInput } from './batch-script.js';
import { invalidJob, recipeField, validateJob, type BatchCommon, type ValidJob } from './batch-job.js';
import { AllocationResolver, type AllocationFlags, type JobAllocation } from './batch-allocation.js';
import { inputFiles } from './common.js';
import { composeText } from './compose.js';
import { VERSION } from './version.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { SflowError } from '../util/sflow-error.js';
import { parseTaskMonitorFlag } from '../config/monitor-flags.js';
import { stageInputs } from './remote-inputs.js';
import { loadWithSecrets, secretSources } from './secrets.js';
import { loadRecipe } from '../config/load.js';
import { redactSecretVariables } from '../config/secret-variables.js';
import { writeReceipt } from '../remote/receipt.js';
import { prepareRemote, removeUnstarted } from '../remote/remote-host.js';
import { sessionName, writeLocalRecipeCopy } from './remote-run.js';
import { sessionPaths } from '../remote/session-layout.js';
import { sshCall, sshFailure } from '../remote/ssh-call.js';
import { parseSshTarget, shQuote, type SshTarget } from '../remote/ssh-target.js';
import { sshWithTar } from '../remote/transfer.js';
import type { TarEntry } from '../remote/tar-write.js';

const usage = (message: string, hint: string) =>
  new SflowError('cli.ssh_unsupported', message, { phase: 'usage', exitCode: 2, hint });

/** What batch --ssh does not take: usage errors, before anything is sent. */
function refuse(opts: Record<string, unknown>): void {
  if (opts.bulkInput || (opts.bulkSubmit as string[] | undefined)?.length || opts.row)
    throw usage(
      'batch --ssh does not take --bulk-input, --bulk-submit or --row in this version',
      'submit each job with its own sflow batch --ssh, or run the bulk batch on the login node itself',
    );
  for (const [key, flag] of [
    ['sbatchPath', '-o/--sbatch-path'],
    ['sbatchOutput', '-O/--sbatch-output'],
    ['sbatchError', '-E/--sbatch-error'],
  ] as const)
    if (opts[key] !== undefined)
      throw usage(
        `batch --ssh does not take ${flag}: the script and the job's output live in the remote session folder`,
        'the receipt folder here keeps a copy of the script (job.sh); `sflow fetch RECEIPT` copies the output',
      );
  if (!opts.submit && !opts.dryRun)
    throw usage(
      'batch --ssh submits the job on the remote host: add --submit',
      'or --dry-run to see the script without connecting',
    );
}

function count(v: unknown, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`${flag} ${String(v)}: expected a positive integer`, flag);
  return n;
}

/** The Slurm CLIs on the remote host, each call bounded. */
export function sshSlurmExec(t: SshTarget): SchedulerCall {
  return async (tool, args, o = {}) => {
    const started = Date.now();
    const r = await sshCall(t, [tool, ...args].map(shQuote).join(' '), {
      timeoutMs: o.timeoutMs ?? 30_000,
      what: tool,
    });
    return {
      exitCode: r.code,
      signal: r.signal,
      stdout: r.stdout,
      stderr: r.stderr,
      durationMs: Date.now() - started,
      timedOut: r.timedOut,
      attempts: 1,
      ok: r.code === 0 && !r.timedOut,
    };
  };
}

/** What the steps of one `batch --ssh` share once the job is validated here. */
interface SshBatch {
  opts: Record<string, unknown>;
  target: SshTarget;
  common: BatchCommon;
  job: ValidJob;
  staged: ReturnType<typeof stageInputs>;
  /** --nodes/-N, when given */
  nodes: number | undefined;
  composedDoc: ValidJob['loaded']['doc'];
  /** the session's name, here and on the remote host */
  name: string;
  flags: AllocationFlags;
}

const say = (s: string) => process.stderr.write(`[ssh] ${s}\n`);

export async function batchSshCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  let target: SshTarget;
  let nodes: number | undefined;
  let gpn: number | undefined;
  try {
    refuse(opts);
    target = parseSshTarget(String(opts.ssh));
    nodes = count(opts.nodes, '--nodes');
    gpn = count(opts.gpusPerNode, '--gpus-per-node');
  } catch (e) {
    return reportError(e);
  }
  const common = batchCommon(opts);
  let validated: { job: ValidJob; staged: ReturnType<typeof stageInputs> };
  try {
    validated = await validateHere(positional, opts, common, nodes, gpn);
  } catch (e) {
    return invalidJob(e);
  }
  const { job } = validated;
  for (const w of job.warnings) process.stderr.write(`⚠ ${w}\n`);
  if (job.nodes === undefined)
    return reportError(
      usage(
        'cannot tell how many nodes the job needs',
        'pass --nodes/-N, or give the recipe a slurm backend with nodes:',
      ),
    );
  process.stderr.write('✓ dry-run validation passed\n');
  const b: SshBatch = {
    opts,
    target,
    common,
    ...validated,
    nodes,
    composedDoc: opts.resolve ? resolveComposed(job.loaded.doc) : job.loaded.doc,
    name: sessionName(),
    flags: allocationFlags(opts),
  };
  return opts.dryRun ? dryRunSshBatch(b) : submitSshBatch(b);
}

/** The run settings of the job (workspace, output, monitors, where secrets come from). */
function batchCommon(opts: Record<string, unknown>): BatchCommon {
  const workspace = resolve((opts.workspaceDir as string | undefined) ?? process.cwd());
  return {
    workspaceDir: workspace,
    outputDir: resolve(workspace, String(opts.outputDir ?? 'sflow_output')),
    skipArtifactCheck: Boolean(opts.skipArtifactCheck),
    workflowMonitor: Boolean(opts.enableWorkflowMonitor),
    taskMonitors: parseTaskMonitorFlag((opts.enableTaskMonitor as string[] | undefined) ?? []),
    secrets: secretSources(opts),
  };
}

/** Loads (asking for secrets without a value), dry-runs the job and finds the local inputs to upload. */
async function validateHere(
  positional: string[],
  opts: Record<string, unknown>,
  common: BatchCommon,
  nodes: number | undefined,
  gpn: number | undefined,
): Promise<{ job: ValidJob; staged: ReturnType<typeof stageInputs> }> {
  const files = inputFiles(positional, opts, 'sflow.yaml').map((f) => resolve(f));
  // secrets without a value are asked for here: they go up inside the recipe (from memory, 0600)
  await loadWithSecrets(
    () =>
      loadRecipe({
        files,
        set: (opts.set as string[] | undefined) ?? [],
        artifacts: (opts.artifact as string[] | undefined) ?? [],
        missable: (opts.missableTasks as string[] | undefined) ?? [],
        secrets: common.secrets,
      }),
    opts,
    'cannot write the job',
  );
  const job = validateJob(
    {
      files,
      sets: (opts.set as string[] | undefined) ?? [],
      artifacts: (opts.artifact as string[] | undefined) ?? [],
      missable: (opts.missableTasks as string[] | undefined) ?? [],
      ...(nodes !== undefined ? { nodes } : {}),
      ...(gpn !== undefined ? { gpusPerNode: gpn } : {}),
      bulk: false,
    },
    common,
  );
  // the local inputs to upload (relative file:// and fs:// artifacts), as run --ssh finds them
  const staged = stageInputs('run', positional, opts, { quiet: true }); // its warnings are job.warnings
  return { job, staged };
}

/** Partition, account, time, job name and extra lines given as flags. */
function allocationFlags(opts: Record<string, unknown>): AllocationFlags {
  const given = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return {
    ...(given(opts.partition) ? { partition: given(opts.partition) } : {}),
    ...(given(opts.account) ? { account: given(opts.account) } : {}),
    ...(given(opts.time) ? { time: given(opts.time) } : {}),
    ...(given(opts.jobName) ? { jobName: given(opts.jobName) } : {}),
    extra: (opts.sbatchExtraArgs as string[] | undefined) ?? [],
  };
}

/** The job script for a session folder on the remote host and the sflow that runs there. */
function jobScript(b: SshBatch, session: string, sflow: string, alloc: JobAllocation): string {
  const { job, common, opts } = b;
  const p = sessionPaths(session);
  const input: BatchScriptInput = {
    sflow: [sflow],
    version: VERSION,
    files: [p.recipe],
    output: p.controllerLog,
    error: p.controllerLog,
    alloc,
    nodes: job.nodes,
    nodesFrom: b.nodes !== undefined ? '-N/--nodes' : recipeField(job, 'nodes'),
    workspaceDir: p.workspace,
    outputDir: p.output,
    // --set, -a and -M are in the composed recipe already
    sets: [],
    artifacts: [],
    missable: [],
    ...(typeof opts.logLevel === 'string' ? { logLevel: opts.logLevel } : {}),
    skipArtifactCheck: common.skipArtifactCheck,
    workflowMonitor: common.workflowMonitor,
    taskMonitors: common.taskMonitors,
    ...(job.gpusPerNode !== undefined ? { gpusPerNode: job.gpusPerNode } : {}),
    exitFile: p.exit,
  };
  return batchScript(input);
}

/** `--dry-run`: the script with placeholders for what only the remote host can tell; nothing sent. */
async function dryRunSshBatch(b: SshBatch): Promise<number> {
  const { target } = b;
  const later = `(detected on ${target.destination} at submit)`;
  const placeholders = new AllocationResolver(
    b.flags,
    { partition: async () => later, account: async () => later, source: () => 'detection at submit' },
    () => undefined,
  );
  let alloc: JobAllocation;
  try {
    alloc = await placeholders.forJob(b.job.backend);
  } catch (e) {
    return reportError(e);
  }
  process.stdout.write(jobScript(b, `<remote root>/runs/${b.name}`, '<remote sflow>', alloc));
  process.stderr.write(
    `ℹ --dry-run: nothing sent to ${target.destination}; <remote root> and <remote sflow> are chosen at submit\n`,
  );
  return 0;
}

/** A flag, else the recipe's slurm backend, else sinfo / sacctmgr on the login node. */
function remoteAllocation(b: SshBatch): Promise<JobAllocation> {
  const { target } = b;
  const exec = sshSlurmExec(target);
  return new AllocationResolver(
    b.flags,
    {
      partition: () => batchScheduler().defaultPartition(exec),
      account: async () => {
        const who = await sshCall(target, 'id -un', {
          timeoutMs: 30_000,
          what: 'asking the remote user name',
        });
        const user = who.code === 0 ? who.stdout.trim() : '';
        return user ? batchScheduler().defaultAccount(exec, { USER: user }) : undefined;
      },
      source: (field) => `${field === 'partition' ? 'sinfo' : 'sacctmgr'} on ${target.destination}`,
    },
    (m) => say(`    ${m}`),
  ).forJob(b.job.backend);
}

/**
 * connect, ready the remote sflow, upload the inputs and sbatch, then the receipt here; a failure
 * before the job is submitted removes the remote session folder and the local one.
 */
async function submitSshBatch(b: SshBatch): Promise<number> {
  const { target, opts } = b;
  const localDir = resolve(b.common.outputDir, b.name);
  let session: string | undefined;
  let submitted = false;
  try {
    mkdirSync(localDir, { recursive: true });
    // secret values stay out of the local copy (0600 all the same); the recipe goes up from memory
    writeLocalRecipeCopy(join(localDir, 'recipe.yaml'), composeText(redactSecretVariables(b.composedDoc)));
    say(`1/4 connect: ${target.destination}`);
    const host = await prepareRemote(target, opts.sshRemoteRoot as string | undefined, (s) =>
      say(`    ${s}`),
    );
    say(
      `2/4 sflow: ${host.sflow} (${host.how === 'path' ? 'found on the remote PATH' : host.how === 'cache' ? 'cached copy of this build' : 'copied'}); the compute nodes must see it (--ssh-remote-root on a shared filesystem)`,
    );
    const alloc = await remoteAllocation(b);
    session = `${host.root}/runs/${b.name}`;
    const p = sessionPaths(session);
    writeFileSync(join(localDir, 'job.sh'), jobScript(b, session, host.sflow, alloc), { mode: 0o755 });
    say(
      `3/4 inputs: recipe.yaml + job.sh${b.staged.files.length ? ` + ${b.staged.files.length} file(s)` : ''} → ${p.inputs}`,
    );
    const jobId = await uploadAndSubmit(target, session, [
      { name: 'recipe.yaml', data: Buffer.from(composeText(b.composedDoc)) },
      { name: 'job.sh', file: join(localDir, 'job.sh') },
      ...b.staged.files,
    ]);
    submitted = true;
    const receiptPath = join(localDir, 'receipt.json');
    writeReceipt(receiptPath, {
      command: 'batch',
      connection: target.text,
      remote_session: session,
      remote_sflow: host.sflow,
      local_output: localDir,
      job_id: jobId,
      state: 'running',
      sflow_version: VERSION,
      created: new Date().toISOString(),
      updated: '',
    });
    say(`4/4 sbatch: job ${jobId} in ${session}`);
    process.stdout.write(
      `✓ Submitted batch job ${jobId} on ${target.destination}\n  receipt: ${receiptPath}\n  follow it: sflow watch ${receiptPath}; copy its files: sflow fetch ${receiptPath}\n  cancel it: ssh ${target.destination} scancel ${jobId}\n`,
    );
    return 0;
  } catch (e) {
    if (session && !submitted) await removeUnstarted(target, session);
    if (!submitted) rmSync(localDir, { recursive: true, force: true });
    return reportError(e, 'SSH error');
  }
}

/** One ssh call: unpack the inputs into `<session>/inputs`, then `sbatch` the script there. */
async function uploadAndSubmit(t: SshTarget, session: string, inputs: TarEntry[]): Promise<string> {
  const p = sessionPaths(session);
  const q = shQuote;
  const script = `umask 077; mkdir -p ${q(p.inputs)} ${q(p.workspace)} ${q(p.output)} ${q(p.state)} && tar -xf - -C ${q(p.inputs)} && cd ${q(p.workspace)} && sbatch ${q(`${p.inputs}/job.sh`)}`;
  const what = 'uploading the inputs and running sbatch';
  const r = await sshWithTar(t, script, inputs, what);
  const id = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
  if (r.code !== 0 || r.timedOut || !id) throw sshFailure(t, r.code === 0 ? { ...r, code: 1 } : r, what);
  return id;
}
