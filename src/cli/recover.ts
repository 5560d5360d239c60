/**
 * `sflow recover [run-dir…]`: stops what runs that lost their driver (SIGKILL, a crash) left behind
 * and marks them as ended by a lost driver. Without folders: every such run of this user on this
 * machine (the index of live runs); with folders: those runs, refused while their driver still runs.
 * `sflow run` does the same for the index before it starts anything.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { SflowError } from '../config/errors.js';
import { driverLost, forgetLiveRun, listLiveRuns } from '../runtime/live-runs.js';
import { reportError } from './errors.js';
import { describeRecovery, recoverLostRuns, recoverRun, type RecoveryReport } from './recover-runs.js';

export async function recoverCommand(dirs: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const graceMs = opts.graceSeconds !== undefined ? Number(opts.graceSeconds) * 1000 : undefined;
    let reports: RecoveryReport[];
    if (dirs.length === 0) reports = await recoverLostRuns({ graceMs });
    else {
      reports = [];
      const index = listLiveRuns();
      for (const d of dirs) {
        const runDir = resolve(d);
        if (
          !existsSync(runDir) ||
          !statSync(runDir).isDirectory() ||
          !existsSync(resolve(runDir, 'events.jsonl'))
        )
          throw new SflowError(
            'cli.recover_not_run_dir',
            `${d}: not an sflow run directory (no events.jsonl)`,
            {
              phase: 'usage',
              hint: 'pass a folder under sflow_output/, e.g. sflow_output/<workflow>-<date>-<id>',
              exitCode: 2,
            },
          );
        const hit = index.find((r) => resolve(r.entry.runDir) === runDir);
        if (hit && !driverLost(hit.entry))
          throw new SflowError(
            'cli.recover_running',
            `${d}: its driver still runs (pid ${hit.entry.pid} on ${hit.entry.host})`,
            {
              phase: 'usage',
              hint: `stop it with Ctrl-C in its terminal, or kill -TERM ${hit.entry.pid}`,
              exitCode: 2,
            },
          );
        reports.push(await recoverRun(runDir, { driver: hit?.entry, graceMs }));
        if (hit) forgetLiveRun(hit.file);
      }
    }
    if (reports.length === 0) process.stdout.write('No run lost its driver: nothing to recover.\n');
    for (const r of reports) for (const l of describeRecovery(r)) process.stdout.write(`${l}\n`);
    const failed = reports.some((r) =>
      r.attempts.some((a) => a.error || (a.outcome?.found && !a.outcome.stop?.gone)),
    );
    return failed ? 1 : 0;
  } catch (e) {
    return reportError(e);
  }
}
