/**
 * The run's reaper: what a driver killed without warning (SIGKILL, the OOM killer) leaves outside
 * its own process groups — containers, Slurm steps and the allocation, Kubernetes pods — is
 * cleaned up as soon as the driver is gone, not when someone next runs `sflow recover`.
 *
 * It is one small `sh` per run session, started through the launcher like a task (so it has the
 * same lifeline) and idle until then: when the driver dies, the launcher's lifeline sends it SIGTERM
 * with every task group, and its trap execs `sflow recover <run dir>` — the same recovery a user
 * would run, from the ledgers (handles.jsonl, slurm_allocations.jsonl, kubernetes-*.json), which
 * stops what is left, gives back the allocation and marks the run as ended by a lost driver. Its
 * group has a long grace of its own (the launcher kills each group at its own grace). If the
 * launcher itself is killed too, the reaper sees its parent go and recovers once the driver is gone
 * as well. A driver that ends its session normally disarms it (SIGKILL: no recovery runs). Without
 * a launcher (`SFLOW_LAUNCHER=inline`) there is no lifeline and no reaper: `sflow recover` remains.
 */
import { join } from 'node:path';
import { getLauncher } from '../util/launcher/client.js';
import { spawnGroup } from '../util/process-group.js';
import { DEFAULT_GRACE_MS, signalGroup, untrackGroup } from '../util/terminate/index.js';
import { sflowInvocation } from './batch-script.js';

/** how long the launcher lets the reaper's recovery run before it kills it */
export const REAPER_GRACE_MS = 120_000;
/** the reaper's own output, written only when it recovers */
export const REAPER_LOG = 'sflow_reaper.log';

/** runs as `sh -c GUARD sflow-reaper DRIVER_PID LOG RECOVER_ARGV…` */
const GUARD = [
  'd=$1; log=$2; shift 2',
  `trap 'trap - TERM; exec "$@" >>"$log" 2>&1' TERM`,
  'while kill -0 "$d" 2>/dev/null && kill -0 "$PPID" 2>/dev/null; do sleep 5 & wait $!; done',
  'kill -0 "$d" 2>/dev/null && exit 0',
  'exec "$@" >>"$log" 2>&1',
].join('\n');

/** Starts the reaper of a run session; returns its disarm (idempotent, synchronous). */
export async function armRunReaper(runDir: string, graceMs = DEFAULT_GRACE_MS): Promise<() => void> {
  if (!(await getLauncher())) return () => undefined; // inline: nothing would ever signal it
  const recover = [
    ...(await sflowInvocation()),
    'recover',
    runDir,
    '--grace-seconds',
    String(Math.max(1, Math.ceil(graceMs / 1000))),
  ];
  const g = await spawnGroup({
    argv: ['sh', '-c', GUARD, 'sflow-reaper', String(process.pid), join(runDir, REAPER_LOG), ...recover],
    cwd: '/',
    env: { ...process.env, NO_COLOR: '1' },
    logPath: '/dev/null',
    graceMs: REAPER_GRACE_MS,
  });
  // not in the exit hook's list: a driver that crashes (exits without its session's end) is
  // exactly when the reaper must run
  untrackGroup(g.pgid);
  let armed = true;
  return () => {
    if (!armed) return;
    armed = false;
    signalGroup(g.pgid, 'SIGKILL');
  };
}
