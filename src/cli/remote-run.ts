/**
 * `sflow run|compose --ssh '<host> [ssh options]'` (spec cli.md §9.8): validate and compose here,
 * get the remote ready (remote-host.ts), upload and start the controller detached, leave a receipt,
 * follow, fetch, and report. Progress goes to stderr in four stages. Ctrl-C here stops the remote
 * run (remote-agent stop: SIGINT, SIGTERM, SIGKILL with grace periods), fetches what it wrote and
 * exits 130; a second Ctrl-C stops waiting (receipt state `unknown`). A dropped connection leaves
 * the run going: `sflow watch RECEIPT` reattaches, `sflow fetch RECEIPT` copies its files.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { reportError } from './errors.js';
import { SflowError } from '../util/sflow-error.js';
import { VERSION } from './version.js';
import { stageInputs } from './remote-inputs.js';
import { loadWithSecrets, runLoadOptions } from './secrets.js';
import { loadRecipe } from '../config/load.js';
import { inputFiles } from './common.js';
import { parseSshTarget, type SshTarget } from '../remote/ssh-target.js';
import { killAllSsh, sshCall } from '../remote/ssh-call.js';
import { prepareRemote, removeUnstarted, type RemoteHost } from '../remote/remote-host.js';
import { agentCommand, fetchOutput, uploadAndStart } from '../remote/transfer.js';
import { followRemote, type FollowMode } from '../remote/follow-local.js';
import { updateReceipt, writeReceipt, type Receipt } from '../remote/receipt.js';
import { parseEndLine, sessionPaths, type RemoteState } from '../remote/session-layout.js';

type Kind = 'run' | 'compose';

export function sessionName(now = new Date()): string {
  const ts = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `ssh-${ts}-${randomBytes(3).toString('hex')}`;
}

/** The arguments of the remote `sflow run|compose` (inputs already composed: --set, -a, -M are in it). */
function remoteArgs(kind: Kind, p: ReturnType<typeof sessionPaths>, opts: Record<string, unknown>): string[] {
  if (kind === 'compose')
    return [
      'compose',
      '-f',
      p.recipe,
      '-o',
      join(p.output, 'composed.yaml'),
      ...(opts.resolve ? ['--resolve'] : []),
    ];
  const a = ['run', '-f', p.recipe, '--workspace-dir', p.workspace, '--output-dir', p.output];
  if (opts.dryRun) a.push('--dry-run');
  if (opts.logLevel) a.push('--log-level', String(opts.logLevel));
  if (opts.skipArtifactCheck) a.push('--skip-artifact-check');
  if (opts.waitForGpus !== undefined) a.push('--wait-for-gpus', String(opts.waitForGpus));
  if (opts.enableWorkflowMonitor) a.push('--enable-workflow-monitor');
  for (const t of (opts.enableTaskMonitor as string[] | undefined) ?? []) a.push('--enable-task-monitor', t);
  for (const e of (opts.extraArgs as string[] | undefined) ?? []) a.push('-e', e);
  if (opts.verbose) a.push('--verbose');
  return a;
}

function followChoice(kind: Kind, opts: Record<string, unknown>): { mode: FollowMode; tty: boolean } {
  if (kind === 'compose') return { mode: 'stream', tty: false };
  const ttyOpt = String(opts.sshTty ?? 'auto');
  const tty = ttyOpt === 'always' || (ttyOpt === 'auto' && Boolean(process.stdout.isTTY));
  const f = String(opts.sshFollow ?? 'auto');
  const mode: FollowMode =
    f === 'auto' ? (tty ? 'stream' : 'logs') : f === 'none' ? 'stream' : (f as FollowMode);
  return { mode, tty };
}

/** Options the remote command does not get: a usage error, before anything is sent. */
function refuseUnforwarded(kind: Kind, opts: Record<string, unknown>): void {
  const refuse = (message: string, hint: string) =>
    new SflowError('cli.ssh_unsupported', message, { phase: 'usage', exitCode: 2, hint });
  if (kind === 'compose' && (opts.bulkInput || opts.row || opts.validate))
    throw refuse(
      'compose --ssh does not take --bulk-input, --row or --validate in this version',
      'compose the rows locally (sflow compose --bulk-input …), then run each with --ssh',
    );
  if (kind === 'run' && (opts.resume !== undefined || opts.force))
    throw refuse(
      'run --ssh does not take --resume or --force in this version',
      'resume on the remote host itself: sflow run --resume <its run folder> (the receipt names the session)',
    );
}

/** What the steps of one `run --ssh` / `compose --ssh` share, and what the Ctrl-C handler reads. */
interface SshRun {
  kind: Kind;
  opts: Record<string, unknown>;
  target: SshTarget;
  staged: ReturnType<typeof stageInputs>;
  name: string;
  localDir: string;
  receiptPath: string;
  phase: 'preparing' | 'starting' | 'following' | 'stopping';
  interrupts: number;
  receipt?: Receipt;
  /** the remote session folder, once the remote root is known */
  session?: string;
  /** the remote run started (its session folder is no longer removed on a failure) */
  started: boolean;
}

const say = (s: string) => process.stderr.write(`[ssh] ${s}\n`);

/** A remote run that started: its host, session folder and receipt. */
type Started = { host: RemoteHost; session: string; receipt: Receipt };

export async function sshCommand(
  kind: Kind,
  positional: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  let target: SshTarget;
  let staged: ReturnType<typeof stageInputs>;
  try {
    refuseUnforwarded(kind, opts);
    target = parseSshTarget(String(opts.ssh));
    // secrets without a value are asked for here, before anything is sent
    if (kind === 'run')
      await loadWithSecrets(
        () => loadRecipe(runLoadOptions(inputFiles(positional, opts, 'sflow.yaml'), opts)),
        opts,
        'cannot run',
      );
    staged = stageInputs(kind, positional, opts);
  } catch (e) {
    return reportError(e);
  }
  if (opts.tui) say('--tui is ignored with --ssh (the remote run is followed per --ssh-follow)');
  const name = sessionName();
  const workspace = resolve((opts.workspaceDir as string | undefined) ?? process.cwd());
  const localDir = resolve(workspace, (opts.outputDir as string | undefined) ?? 'sflow_output', name);
  const r: SshRun = {
    kind,
    opts,
    target,
    staged,
    name,
    localDir,
    receiptPath: join(localDir, 'receipt.json'),
    phase: 'preparing',
    interrupts: 0,
    started: false,
  };
  const unwatch = watchInterrupts(r);
  try {
    return await followToTheEnd(r, await startRemote(r));
  } catch (e) {
    if (r.session && !r.started) await removeUnstarted(target, r.session);
    if (!r.started) rmSync(localDir, { recursive: true, force: true });
    if (e instanceof Interrupted || (r.interrupts && !r.started)) {
      say('cancelled before the remote run started; nothing was left running remotely');
      return 130;
    }
    return reportError(e, 'SSH error');
  } finally {
    unwatch();
  }
}

/**
 * Ctrl-C / SIGTERM: the first stops the remote run (once it has started: it is not left orphaned
 * half-way), the second stops waiting and leaves with 130. Returns the disposer.
 */
function watchInterrupts(r: SshRun): () => void {
  const onSignal = () => {
    r.interrupts++;
    if (r.interrupts === 1) {
      if (r.phase === 'starting') say('Ctrl-C: stopping the remote run as soon as it has started');
      else if (r.phase === 'following') say('Ctrl-C: stopping the remote run (Ctrl-C again to stop waiting)');
      if (r.phase !== 'starting') killAllSsh();
      return;
    }
    killAllSsh('SIGKILL');
    if (r.receipt) updateReceipt(r.receiptPath, r.receipt, 'unknown');
    say(
      `stopped waiting; the remote run's state is unknown${r.receipt ? `; check it with: sflow watch ${r.receiptPath}` : ''}`,
    );
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/** Steps 1–4: connect, ready the remote sflow, upload the inputs and start the run; the receipt. */
async function startRemote(r: SshRun): Promise<Started> {
  const { target, staged, opts } = r;
  mkdirSync(r.localDir, { recursive: true });
  // the local copy has the secret variables' values replaced (as a local run's record has); the
  // recipe that runs crosses the connection from memory, on ssh's stdin (never on a command line)
  writeLocalRecipeCopy(join(r.localDir, 'recipe.yaml'), staged.localCopyText);
  say(`1/4 connect: ${target.destination}`);
  const host = await prepareRemote(target, opts.sshRemoteRoot as string | undefined, (s) => say(`    ${s}`));
  if (r.interrupts) throw new Interrupted();
  say(
    `2/4 sflow: ${host.sflow} (${host.how === 'path' ? 'found on the remote PATH' : host.how === 'cache' ? 'cached copy of this build' : 'copied'})`,
  );
  const session = `${host.root}/runs/${r.name}`;
  r.session = session;
  const p = sessionPaths(session);
  say(
    `3/4 inputs: recipe.yaml${staged.files.length ? ` + ${staged.files.length} file(s)` : ''} → ${p.inputs}`,
  );
  r.phase = 'starting';
  await uploadAndStart(
    target,
    host.sflow,
    session,
    [{ name: 'recipe.yaml', data: Buffer.from(staged.recipeText) }, ...staged.files],
    remoteArgs(r.kind, p, opts),
  );
  r.started = true;
  const receipt: Receipt = {
    command: r.kind,
    connection: target.text,
    remote_session: session,
    remote_sflow: host.sflow,
    local_output: r.localDir,
    state: 'running',
    sflow_version: VERSION,
    created: new Date().toISOString(),
    updated: '',
  };
  r.receipt = receipt;
  writeReceipt(r.receiptPath, receipt);
  say(`4/4 run: started in ${session}`);
  say(`    receipt: ${r.receiptPath}`);
  return { host, session, receipt };
}

/**
 * Follows the started run to its end (or stops it after a Ctrl-C), then fetches its files back;
 * a lost connection leaves it running and says how to follow it again. The run's exit code.
 */
async function followToTheEnd(r: SshRun, { host, session, receipt }: Started): Promise<number> {
  const { kind, target, receiptPath, localDir, opts } = r;
  r.phase = 'following';
  const { mode, tty } = followChoice(kind, opts);
  const follow = r.interrupts
    ? undefined
    : await followRemote(target, host.sflow, session, mode, tty, (s) =>
        // compose: stdout is for the composed YAML only
        kind === 'compose' ? process.stderr.write(s) : process.stdout.write(s),
      );
  if (r.interrupts) return await stopRun(target, host.sflow, session, receiptPath, receipt, localDir, say);
  if (!follow?.end) {
    const why = follow?.ssh.stderr.trim().split('\n').pop();
    say(`lost the connection to ${target.destination}${why ? ` (${why})` : ''}; the remote run goes on`);
    say(`    follow it again: sflow watch ${receiptPath}`);
    say(`    copy its files:  sflow fetch ${receiptPath}`);
    return 1;
  }
  r.receipt = updateReceipt(receiptPath, receipt, follow.end.state, follow.end.code);
  await fetchBack(kind, target, host.sflow, session, localDir, opts, say);
  if (kind === 'compose' && follow.end.code === 0) deliverComposed(localDir, opts);
  say(`remote run ${follow.end.state} (exit ${follow.end.code}); local copy: ${localDir}`);
  return follow.end.code;
}

class Interrupted extends Error {}

/** `recipe.yaml` next to the receipt: mode 0600 like the receipt, even where the file existed */
export function writeLocalRecipeCopy(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

async function fetchBack(
  kind: Kind,
  t: SshTarget,
  sflow: string,
  session: string,
  localDir: string,
  opts: Record<string, unknown>,
  say: (s: string) => void,
): Promise<void> {
  const what = kind === 'compose' ? 'all' : String(opts.sshFetch ?? 'logs');
  if (what === 'none') return;
  say(`fetching ${what === 'all' ? 'the whole output' : 'the logs'} → ${localDir}`);
  try {
    await fetchOutput(t, sflow, session, what as 'logs' | 'all', localDir);
  } catch (e) {
    reportError(e, 'SSH error');
    say(`the run's files stay in ${session}; try again with: sflow fetch ${join(localDir, 'receipt.json')}`);
  }
}

function deliverComposed(localDir: string, opts: Record<string, unknown>): void {
  const composed = join(localDir, 'composed.yaml');
  if (typeof opts.output === 'string') {
    const out = resolve(opts.output);
    copyFileSync(composed, out);
    process.stdout.write(`Composed configuration copied to ${out}\n`);
  } else process.stdout.write(readFileSync(composed, 'utf8'));
}

async function stopRun(
  t: SshTarget,
  sflow: string,
  session: string,
  receiptPath: string,
  receipt: Receipt,
  localDir: string,
  say: (s: string) => void,
): Promise<number> {
  say(`stopping the remote run in ${session}`);
  const r = await sshCall(t, agentCommand(sflow, 'stop', session), {
    timeoutMs: 60_000,
    what: 'stopping the run',
    onStderr: (s) => process.stderr.write(s.replace(/^(?=.)/gm, '[ssh]     ')),
  });
  const end = r.stdout.split('\n').map(parseEndLine).find(Boolean);
  const state: RemoteState = end && end.state !== 'unknown' ? end.state : 'unknown';
  updateReceipt(receiptPath, receipt, state, end?.code);
  if (state === 'unknown')
    say(`could not confirm that the remote run stopped; check with: sflow watch ${receiptPath}`);
  else say(`remote run ${state}${end ? ` (exit ${end.code})` : ''}`);
  try {
    await fetchOutput(t, sflow, session, 'logs', localDir);
    say(`partial logs fetched → ${localDir}`);
  } catch (e) {
    reportError(e, 'SSH error');
  }
  return 130;
}
