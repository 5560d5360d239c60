/**
 * What `sflow batch` asks Slurm (artifacts-batch.md C3, C7): the default partition (`sinfo`), the
 * user's account (`sacctmgr`), both bounded at 10 s and silent on failure; and `sbatch <script>`.
 * Each takes the caller to use (default: the local Slurm CLIs), so a remote controller can run the
 * same calls on a login node.
 */
import { userInfo } from 'node:os';
import type { BatchScheduler } from '../kind.js';
import { slurmExec, callFailure, type SlurmExec } from './slurm-exec.js';

const DETECT_MS = 10_000;

/** The partition marked default (`name*`) in `sinfo`, else the first one listed. */
export function pickPartition(sinfo: string): string | undefined {
  const names = sinfo
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  const star = names.find((n) => n.endsWith('*'));
  return (star ?? names[0])?.replace(/\*$/, '') || undefined;
}

export async function detectPartition(exec: SlurmExec = slurmExec()): Promise<string | undefined> {
  const r = await exec('sinfo', ['--noheader', '--format=%P'], { timeoutMs: DETECT_MS });
  return r.ok ? pickPartition(r.stdout) : undefined;
}

export async function detectAccount(
  exec: SlurmExec = slurmExec(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  let user = env.USER || env.LOGNAME;
  if (!user)
    try {
      user = userInfo().username;
    } catch {
      return undefined;
    }
  const r = await exec(
    'sacctmgr',
    ['show', 'assoc', `user=${user}`, 'format=Account%30', '--noheader', '--parsable2'],
    { timeoutMs: DETECT_MS },
  );
  if (!r.ok) return undefined;
  return (
    r.stdout
      .split('\n')
      .map((s) => s.trim())
      .find(Boolean) || undefined
  );
}

/** `sbatch <script>`: the job id, or an error with sbatch's own words */
export async function submitBatch(
  script: string,
  exec: SlurmExec = slurmExec(),
): Promise<{ jobId: string; output: string } | { error: string }> {
  const r = await exec('sbatch', [script], { timeoutMs: 60_000 });
  const id = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
  if (r.ok && id) return { jobId: id, output: r.stdout.trim() };
  return { error: callFailure('sbatch', [script], r) };
}

/** Slurm's side of `sflow batch`, dispatched through the registry (`BackendKind.batch`). */
export const slurmBatch: BatchScheduler = {
  local: (env) => slurmExec(env),
  defaultPartition: (call) => detectPartition(call),
  defaultAccount: (call, env) => detectAccount(call, env),
  submit: (script, call) => submitBatch(script, call),
};
