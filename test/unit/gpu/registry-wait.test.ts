/**
 * The wait loop of `claim` on a fake clock: when it polls, when it reports progress and with what
 * text, when it gives up, and the warning of a wait without a limit. Every GPU is held by another
 * run throughout, so each poll is a lost round; the probe records when each round ran.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claim, type ClaimRequest } from '../../../src/gpu/registry.js';
import type { SflowError } from '../../../src/config/errors.js';
import { failure, gpus, req, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let t0: number;
beforeEach(async () => {
  ({ dir, cleanup } = tempDir());
  vi.useFakeTimers({ now: 1_000_000 });
  t0 = Date.now();
  await claim(req(dir, { runId: 'run-a', task: 'holder', want: { count: 4 } }));
});
afterEach(() => {
  vi.useRealTimers();
  cleanup();
});

/** a waiting claim of run-b, with the times (ms after the start) of its rounds and messages */
function waiter(over: Partial<ClaimRequest>) {
  const rounds: number[] = [];
  const messages: [number, string][] = [];
  let ended: { at: number; error: SflowError } | undefined;
  const p = failure(
    claim(
      req(dir, {
        runId: 'run-b',
        task: 'waiter',
        probe: () => {
          rounds.push(Date.now() - t0);
          return Promise.resolve({ gpus: gpus(4), apps: [] });
        },
        onWait: (m) => messages.push([Date.now() - t0, m]),
        ...over,
      }),
    ),
  ).then((error) => {
    ended = { at: Date.now() - t0, error };
  });
  return { rounds, messages, ended: () => ended, done: p };
}

const warning =
  "still waiting for GPUs for task 'waiter' after 10 minutes; two runs that each hold part of the GPUs can " +
  'wait for each other forever';

describe('waiting for GPUs', () => {
  it('polls every pollMs, once more at the deadline, and gives up exactly there', async () => {
    const w = waiter({ waitSeconds: 2.5, pollMs: 1000, progressMs: 60_000 });
    await vi.advanceTimersByTimeAsync(2_499);
    expect(w.ended()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.rounds).toEqual([0, 1000, 2000, 2500]);
    expect(w.ended()?.at).toBe(2500);
    expect(w.ended()?.error.code).toBe('GPU_UNAVAILABLE');
    expect(w.ended()?.error.message).toMatch(
      /reserved by run 'run-a' task 'holder' \(pid \d+\) after waiting 3 s$/,
    );
  });

  it('takes the wait from the settings when the request names none', async () => {
    const w = waiter({
      pollMs: 1000,
      settings: { dir, busyMemMiB: 512, ignoreForeign: false, waitSeconds: 2 },
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.rounds).toEqual([0, 1000, 2000]);
    expect(w.ended()?.error.message).toMatch(/ after waiting 2 s$/);
  });

  it('reports progress at once and then every progressMs, with the time left', async () => {
    const ac = new AbortController();
    const w = waiter({ waitSeconds: 30, pollMs: 1000, progressMs: 5000, signal: ac.signal });
    await vi.advanceTimersByTimeAsync(12_000);
    expect(w.messages.map(([at, m]) => [at, m.slice(0, m.indexOf(':'))])).toEqual([
      [0, 'waiting for GPUs (30 s left)'],
      [5000, 'waiting for GPUs (25 s left)'],
      [10_000, 'waiting for GPUs (20 s left)'],
    ]);
    expect(w.messages[0][1]).toContain("reserved by run 'run-a' task 'holder'");
    ac.abort();
    await vi.advanceTimersByTimeAsync(0);
    await w.done;
    expect(w.ended()?.at).toBe(12_000);
    expect(w.ended()?.error.code).toBe('GPU_WAIT_CANCELLED');
    expect(w.ended()?.error.message).toBe("Waiting for GPUs for task 'waiter' was cancelled");
    expect(w.ended()?.error.phase).toBe('run');
  });

  it('warns once, at 10 minutes, that a wait without a limit may never end', async () => {
    const ac = new AbortController();
    const w = waiter({ waitSeconds: 0, pollMs: 10_000, progressMs: 3_600_000, signal: ac.signal });
    await vi.advanceTimersByTimeAsync(599_999);
    expect(w.messages.map(([at, m]) => [at, m.slice(0, m.indexOf(':'))])).toEqual([
      [0, 'waiting for GPUs (no time limit)'],
    ]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.messages.slice(1)).toEqual([[600_000, warning]]);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(w.messages).toHaveLength(2);
    expect(w.rounds).toHaveLength(121);
    ac.abort();
    await vi.advanceTimersByTimeAsync(0);
    await w.done;
    expect(w.ended()?.error.code).toBe('GPU_WAIT_CANCELLED');
  });

  it('does not warn during a wait with a limit, however long', async () => {
    const w = waiter({ waitSeconds: 900, pollMs: 60_000, progressMs: 3_600_000 });
    await vi.advanceTimersByTimeAsync(960_000);
    expect(w.ended()?.at).toBe(900_000);
    expect(w.messages.map(([at, m]) => [at, m.slice(0, m.indexOf(':'))])).toEqual([
      [0, 'waiting for GPUs (900 s left)'],
    ]);
  });
});
