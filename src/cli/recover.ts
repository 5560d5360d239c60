/** `sflow recover <run dir>`: stop and delete what a driver that died left behind (see backends/recover-run.ts). */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SflowError } from '../config/errors.js';
import { reportError } from './errors.js';

export async function recoverCommand(runDir: string, opts: Record<string, unknown>): Promise<number> {
  try {
    const dir = resolve(runDir);
    if (!existsSync(dir))
      throw new SflowError('cli.run_dir', `no run directory at ${dir}`, {
        phase: 'usage',
        exitCode: 2,
        hint: 'pass sflow_output/<run id> of the run whose driver died',
      });
    const { recoverRun } = await import('../backends/recover-run.js');
    const r = await recoverRun(dir, opts, process.env, AbortSignal.timeout(10 * 60_000));
    for (const l of r.lines) process.stdout.write(`${l}\n`);
    return r.failed ? 1 : 0;
  } catch (e) {
    return reportError(e);
  }
}
