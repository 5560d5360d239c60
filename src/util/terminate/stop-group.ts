/**
 * The one TERM → grace → KILL (terminate: "graceful stop"), used by the local backend for the
 * groups it spawned, for groups found in a handle ledger, and through it by teardown.
 */
import { groupState } from '../process-liveness.js';
import { signalGroup } from './signal-group.js';
import { waitGroupGone } from './wait-gone.js';

/** how long to wait for the kernel to tear a group down after SIGKILL */
export const KILL_WAIT_MS = 2_000;
export const DEFAULT_GRACE_MS = 5_000;

export interface GroupStopOutcome {
  /** the group had no running member when the stop began */
  alreadyGone: boolean;
  /** signals actually sent to the group, in order */
  signals: Array<'SIGTERM' | 'SIGKILL'>;
  /** no member runs any more (false only if the bounded wait after SIGKILL ran out) */
  gone: boolean;
  elapsedMs: number;
}

export interface StopGroupOptions {
  graceMs: number;
  /** SIGKILL at once */
  force?: boolean;
  /** aborting it cuts the grace short (the group is killed) */
  hurry?: AbortSignal;
  leaderExit?: Promise<unknown>;
}

export async function stopGroup(pgid: number, o: StopGroupOptions): Promise<GroupStopOutcome> {
  const t0 = Date.now();
  const signals: GroupStopOutcome['signals'] = [];
  const out = (alreadyGone: boolean, gone: boolean): GroupStopOutcome => ({
    alreadyGone,
    signals,
    gone,
    elapsedMs: Date.now() - t0,
  });
  if (groupState(pgid) !== 'alive') return out(true, true);
  let gone = false;
  if (!o.force && !o.hurry?.aborted) {
    if (signalGroup(pgid, 'SIGTERM')) signals.push('SIGTERM');
    gone = await waitGroupGone(pgid, {
      deadline: t0 + Math.max(0, o.graceMs),
      signal: o.hurry,
      leaderExit: o.leaderExit,
    });
  }
  if (!gone) {
    if (signalGroup(pgid, 'SIGKILL')) signals.push('SIGKILL');
    gone = await waitGroupGone(pgid, { deadline: Date.now() + KILL_WAIT_MS, leaderExit: o.leaderExit });
  }
  return out(false, gone);
}
