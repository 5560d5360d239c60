/**
 * Clean up on exit (terminate: "cleanup"): process groups spawned by this driver and not yet
 * known to be gone are SIGKILLed by a last-resort `process.on('exit')` hook, so a crashing driver
 * leaves nothing behind (SIGKILL of the driver itself is covered by the handle ledger instead).
 */
import { signalGroup } from './signal-group.js';

const live = new Map<number, { argv0: string }>();
let hookInstalled = false;

export function trackGroup(pgid: number, argv0: string): void {
  installExitHook();
  live.set(pgid, { argv0 });
}

export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}

/** Process groups spawned here and not yet known to be gone. */
export function liveGroups(): number[] {
  return [...live.keys()];
}

/** SIGKILL every tracked group, synchronously (safe inside `process.on('exit')`); returns how many. */
export function killAllGroupsSync(): number {
  let n = 0;
  for (const pgid of live.keys()) if (signalGroup(pgid, 'SIGKILL')) n++;
  live.clear();
  return n;
}

export function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', () => {
    killAllGroupsSync();
  });
}
