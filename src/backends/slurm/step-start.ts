/**
 * A Slurm step that never starts is a failed start, named (issue 24): srun says why on its stderr,
 * which lands in the task log — a launch that failed on a node (its slurmd does not answer), a step
 * Slurm cannot create (more than the node has), a node that failed under it. When the srun client
 * ends and the log holds such a line, the attempt fails with srun's own words and a hint instead of
 * reading as a task that ran and exited 1. A client still waiting for its step after the bound
 * (`SFLOW_SLURM_STEP_START_TIMEOUT`, seconds, default 600: steps that do not overlap wait for the
 * resources other steps hold) is stopped and fails the same way.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { envNumber } from '../../config/env-number.js';

export const STEP_START_TIMEOUT_S = 600;

/** how long an srun client may wait for its step before the attempt fails (ms) */
export function stepStartTimeoutMs(env: NodeJS.ProcessEnv): number {
  return envNumber(env, 'SFLOW_SLURM_STEP_START_TIMEOUT', STEP_START_TIMEOUT_S, 1) * 1000;
}

/** srun lines that mean the step did not start (or lost its node), with the hint for each */
const FAILURES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [
    /^srun: error: Task launch for StepId=\S+ failed on node (\S+): (.*)$/m,
    (m) =>
      `slurmd on ${m[1]} did not take the step: check \`scontrol show node ${m[1]}\` and \`sinfo -R\` (a node whose slurmd is down is marked DOWN only after SlurmdTimeout)`,
  ],
  [
    /^srun: error: Unable to create step for job \S+: (.*)$/m,
    () =>
      'Slurm cannot create the step in this allocation: check the task resources (GPUs, CPUs, memory) against `scontrol show node` and the allocation',
  ],
  [
    /^srun: error: Node failure on (\S+)$/m,
    (m) => `node ${m[1]} failed under the step: check \`scontrol show node ${m[1]}\` and \`sinfo -R\``,
  ],
  [/^srun: error: Application launch failed: (.*)$/m, () => 'the step could not be launched on its nodes'],
];

/** the last ~16 KiB of a log (srun's lines are at its end) */
export function logTail(path: string, bytes = 16_384): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, bytes);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `srun: …` lines of a log tail, the last few, joined */
function srunLines(tail: string, n = 3): string {
  return tail
    .split('\n')
    .filter((l) => l.startsWith('srun: '))
    .slice(-n)
    .join(' | ');
}

/** why the step did not start (srun's words and a hint), or undefined when the log says nothing of it */
export function launchFailure(tail: string): string | undefined {
  for (const [re, hint] of FAILURES) {
    const m = re.exec(tail);
    if (m) return `the Slurm step did not start: ${m[0].replace(/^srun: error: /, '')} — ${hint(m)}`;
  }
  return undefined;
}

/** the attempt's error after its client was stopped for waiting past the bound */
export function startTimeout(ms: number, tail: string): string {
  const said = srunLines(tail);
  return `the Slurm step did not start within ${Math.round(ms / 1000)} s (SFLOW_SLURM_STEP_START_TIMEOUT)${said ? `: ${said}` : ''} — other steps may hold the nodes' resources (operator \`overlap: false\`); raise the bound or let the steps overlap`;
}
