/**
 * The task shell's TERM trap (src/operators/graceful-stop.ts), first in every Slurm step and Docker
 * container script. Slurm signals the whole step at once,
 * and a step whose shell dies first ends at once, when Slurm SIGKILLs the rest. With the trap the
 * shell outlives its command's own stop: here a command whose TERM handler takes a while, run in
 * the foreground and as a background job, with TERM sent to the whole process group as slurmstepd
 * does. The command's marker file must exist by the time the shell has exited, and the shell
 * exits 143.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TERM_TRAP_LINE } from '../../../src/operators/graceful-stop.js';
import { stepScript } from '../../../src/operators/srun-step.js';
import { scratchDir } from '../../helpers/scratch.js';

/** a command that says "ready", then on TERM takes 0.4 s before writing `marker` and exiting */
const slowStop = (marker: string) =>
  `sh -c 'trap "sleep 0.4; echo stopped > ${marker}; exit 0" TERM; echo ready; while :; do sleep 0.05; done'`;

/** runs `script` with bash in its own group, TERMs the group once it printed "ready" */
async function termGroup(
  script: string,
  marker: string,
): Promise<{ code: number | null; markerAtExit: boolean }> {
  const child = spawn('bash', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('ready')) resolve();
    });
    child.on('exit', () => reject(new Error(`exited before it was ready: ${out}`)));
  });
  process.kill(-child.pid!, 'SIGTERM');
  return new Promise((resolve) =>
    child.on('exit', (code) => resolve({ code, markerAtExit: existsSync(marker) })),
  );
}

describe("the task shell's TERM trap", () => {
  it('a foreground command finishes its own stop before the step shell exits (143)', async () => {
    const marker = join(scratchDir('sflow-term-'), 'stopped');
    const r = await termGroup(`${TERM_TRAP_LINE}\n${slowStop(marker)}\necho after`, marker);
    expect(r).toEqual({ code: 143, markerAtExit: true });
  });

  it('background jobs the script waits on finish their stop too', async () => {
    const marker = join(scratchDir('sflow-term-'), 'stopped');
    const r = await termGroup(`${TERM_TRAP_LINE}\n${slowStop(marker)} &\nwait`, marker);
    expect(r).toEqual({ code: 143, markerAtExit: true });
  });

  it('every step script carries it, before the task script, with or without a task folder', () => {
    const base = { nodes: ['n1'], config: {}, script: 'echo hi' };
    for (const env of [{}, { SFLOW_TASK_OUTPUT_DIR: '/r/t' }]) {
      const s = stepScript({ ...base, env } as unknown as Parameters<typeof stepScript>[0]);
      expect(s.split('\n')).toContain(TERM_TRAP_LINE);
      expect(s.indexOf(TERM_TRAP_LINE)).toBeLessThan(s.indexOf('echo hi'));
    }
  });
});
