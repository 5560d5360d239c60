/**
 * Every Slurm CLI call of the backend goes through here: bounded (timeout, retries only where a
 * repeat is harmless), traced by util/bounded-exec.ts into the run's "External Command Health"
 * section and command_trace.jsonl, with the run's environment (SLURM_CONF and friends).
 */
import { boundedExec, type BoundedExecOptions, type ExecOutcome } from '../../util/bounded-exec.js';

export type SlurmTool =
  'salloc' | 'srun' | 'scontrol' | 'scancel' | 'squeue' | 'sbatch' | 'sinfo' | 'sacctmgr';

export interface SlurmExecOptions extends Partial<BoundedExecOptions> {
  env?: Record<string, string | undefined>;
}

/** default bound of a control call (status, cancel, node lookup) */
export const CONTROL_TIMEOUT_MS = 30_000;

export type SlurmExec = (tool: SlurmTool, args: string[], o?: SlurmExecOptions) => Promise<ExecOutcome>;

/**
 * A Slurm caller bound to an environment (`ctx.env` of the run). It takes any tool name, so it is
 * both a `SlurmExec` and the registry's `SchedulerCall` (`sflow batch`).
 */
export function slurmExec(
  env: NodeJS.ProcessEnv = process.env,
): (tool: string, args: string[], o?: SlurmExecOptions) => Promise<ExecOutcome> {
  const base: Record<string, string | undefined> = { ...env };
  return (tool, args, o = {}) =>
    boundedExec(tool, args, {
      timeoutMs: CONTROL_TIMEOUT_MS,
      ...o,
      env: { ...base, ...(o.env ?? {}) },
    });
}

/** One line saying how a call failed (exit code or timeout, and the end of its stderr). */
export function callFailure(tool: string, args: string[], r: ExecOutcome): string {
  const how = r.timedOut
    ? `timed out after ${Math.round(r.durationMs / 1000)} s`
    : r.errorCode === 'ENOENT'
      ? 'not found on PATH'
      : `exited ${r.exitCode ?? r.signal ?? '?'}`;
  const tail = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ');
  return `${tool} ${args.join(' ')}: ${how}${tail ? `: ${tail}` : ''}`;
}
