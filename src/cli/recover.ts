/**
 * `sflow recover [run-dir…]`: stops what runs that lost their driver (SIGKILL, a crash) left behind
 * and marks them as ended by a lost driver. Without folders: every such run of this user on this
 * machine (the index of live runs); with folders: those runs, refused while their driver still runs
 * (the index's pid, or any backend kind's `liveDriver`, e.g. a batch driver on a cluster). Every open
 * handle of `handles.jsonl` goes through its backend's `recover`, then every backend kind's
 * `recoverRun` gives back run-level leftovers with the command's options. `sflow run` does the same
 * for the index before it starts anything.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { BACKEND_KINDS, loadBackendKinds } from '../backends/registry.js';
import { SflowError } from '../util/sflow-error.js';
import { driverLost, forgetLiveRun, listLiveRuns } from '../runtime/live-runs.js';
import { reportError } from './errors.js';
import { lockRunDir, type RunLock } from './run-lock.js';
import {
  describeRecovery,
  liveDriverOf,
  recoverLostRuns,
  recoverRun,
  type RecoveryReport,
} from './recover-runs.js';
import { cliOptionBag } from '../util/cli-options.js';

function usage(code: string, message: string, hint: string): SflowError {
  return new SflowError(code, message, { phase: 'usage', hint, exitCode: 2 });
}

export async function recoverCommand(dirs: string[], opts: Record<string, unknown>): Promise<number> {
  const locks: RunLock[] = [];
  try {
    const grace = opts.graceSeconds !== undefined ? Number(opts.graceSeconds) : undefined;
    if (grace !== undefined && !(Number.isFinite(grace) && grace >= 0))
      throw usage(
        'cli.recover_grace',
        `--grace-seconds ${String(opts.graceSeconds)}: expected a number of seconds ≥ 0`,
        'e.g. --grace-seconds 5 (TERM, then KILL after that long)',
      );
    const graceMs = grace !== undefined ? grace * 1000 : undefined;
    const kinds = Object.values(BACKEND_KINDS);
    await loadBackendKinds(); // liveDriverOf below
    const common = { graceMs, options: cliOptionBag(opts), kinds };
    let reports: RecoveryReport[];
    if (dirs.length === 0) reports = await recoverLostRuns(common);
    else {
      const index = listLiveRuns();
      // every folder checked before anything is touched
      const targets = dirs.map((d) => {
        const runDir = resolve(d);
        if (
          !existsSync(runDir) ||
          !statSync(runDir).isDirectory() ||
          !existsSync(resolve(runDir, 'events.jsonl'))
        )
          throw usage(
            'cli.recover_not_run_dir',
            `${d}: not an sflow run directory (no events.jsonl)`,
            'pass a folder under sflow_output/, e.g. sflow_output/<workflow>-<date>-<id>',
          );
        // a run, a resume or another recover that drives it now is refused by name
        locks.push(lockRunDir(runDir, 'sflow recover', 'cannot recover'));
        const hit = index.find((r) => resolve(r.entry.runDir) === runDir);
        if (hit && !driverLost(hit.entry))
          throw usage(
            'cli.recover_running',
            `${d}: its driver still runs (pid ${hit.entry.pid} on ${hit.entry.host})`,
            `stop it with Ctrl-C in its terminal, or kill -TERM ${hit.entry.pid}`,
          );
        const live = liveDriverOf(runDir, kinds);
        if (live)
          throw usage(
            'cli.recover_running',
            `${d}: a driver of this run still runs (${live})`,
            'stop that driver first (or wait for it to end); recover is for runs whose driver is gone',
          );
        return { runDir, hit };
      });
      reports = [];
      for (const { runDir, hit } of targets) {
        reports.push(await recoverRun(runDir, { ...common, driver: hit?.entry }));
        if (hit) forgetLiveRun(hit.file);
      }
    }
    if (reports.length === 0) process.stdout.write('No run lost its driver: nothing to recover.\n');
    for (const r of reports) for (const l of describeRecovery(r)) process.stdout.write(`${l}\n`);
    return reports.some((r) => r.failed || r.liveDriver) ? 1 : 0;
  } catch (e) {
    return reportError(e);
  } finally {
    for (const l of locks) l.release();
  }
}
