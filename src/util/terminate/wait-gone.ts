/**
 * Waiting for a process group to empty (terminate: "deadline"). The leader's exit is awaited as
 * an event, not polled; only members that outlive it (background children) are looked for, with
 * the cheap signal-0 probe and, every few rounds, the /proc scan that tells zombies from running
 * members (PID 1 of a container may never reap them).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { groupState } from '../process-liveness.js';

export interface WaitGoneOptions {
  /** resolves when the group leader exits (a child of this process); awaited before any polling */
  leaderExit?: Promise<unknown>;
  /** give up at this time (ms epoch) */
  deadline: number;
  /** stop waiting early (e.g. a second Ctrl-C turns a graceful stop into a kill) */
  signal?: AbortSignal;
}

async function raceUntil(p: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return;
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([p, sleep(ms, undefined, { signal: ac.signal }).catch(() => undefined)]);
  } finally {
    ac.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** True once no member of the group runs; false when the deadline or the signal came first. */
export async function waitGroupGone(pgid: number, o: WaitGoneOptions): Promise<boolean> {
  if (o.leaderExit) await raceUntil(o.leaderExit, o.deadline - Date.now(), o.signal);
  let delay = 2;
  for (let i = 0; ; i++) {
    const state = groupState(pgid, i % 4 === 3);
    if (state !== 'alive') return true;
    if (Date.now() >= o.deadline || o.signal?.aborted) return groupState(pgid) !== 'alive';
    await raceUntil(
      new Promise(() => undefined),
      Math.min(delay, Math.max(1, o.deadline - Date.now())),
      o.signal,
    );
    delay = Math.min(delay * 2, 25);
  }
}
