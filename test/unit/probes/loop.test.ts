import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatWait, runProbeLoop } from '../../../src/probes/loop.js';
import type { CheckResult, ProbeCheck, ProbeLoopResultEvent } from '../../../src/probes/types.js';

/** A check answering from a script of results; records when it was called. */
function scripted(answers: Array<boolean | 'throw' | 'hang'>, describe = 'fake probe') {
  const calls: number[] = [];
  const check: ProbeCheck = {
    kind: 'tcp_port',
    describe: () => describe,
    check(): Promise<CheckResult> {
      calls.push(Date.now());
      const a = answers[Math.min(calls.length - 1, answers.length - 1)];
      if (a === 'throw') return Promise.reject(new Error('boom'));
      if (a === 'hang') return new Promise(() => undefined); // ignores its signal
      return Promise.resolve({ ok: a, detail: a ? 'up' : `down#${calls.length}` });
    },
  };
  return { check, calls };
}

/**
 * The loop's timing is checked on vitest's fake clock (timers and `Date`), so every assertion
 * about when a check ran is exact and does not depend on how loaded the machine is.
 */
describe('runProbeLoop', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Follows a loop's promise: `settledAt` is the fake time it resolved at. */
  function track<T>(p: Promise<T>) {
    const state: { settled: boolean; settledAt?: number; value?: T } = { settled: false };
    void p.then((v) => {
      state.settled = true;
      state.settledAt = Date.now();
      state.value = v;
    });
    return state;
  }

  it('runs the first check at delay, then every interval, and passes after threshold consecutive successes', async () => {
    const { check, calls } = scripted([false, true, false, true, true]);
    const seen: ProbeLoopResultEvent[] = [];
    const t0 = Date.now();
    const loop = track(
      runProbeLoop({
        check,
        delayMs: 100,
        intervalMs: 40,
        threshold: 2,
        startedAt: t0,
        onResult: (r) => seen.push(r),
      }),
    );
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([t0 + 100]);
    await vi.runAllTimersAsync();
    expect(loop.settled).toBe(true);
    expect(loop.value).toMatchObject({ passed: true, checks: 5, last: { ok: true, detail: 'up' } });
    expect(calls.map((c) => c - t0)).toEqual([100, 140, 180, 220, 260]);
    expect(loop.settledAt).toBe(t0 + 260);
    expect(seen.map((r) => r.consecutive)).toEqual([0, 1, 0, 1, 2]);
    expect(seen.map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
  });

  it('resolves right after the passing check, not on a later tick', async () => {
    const { check, calls } = scripted([true]);
    const loop = track(runProbeLoop({ check, delayMs: 0, intervalMs: 1000, threshold: 1 }));
    await vi.advanceTimersByTimeAsync(0); // promise callbacks only: the clock does not move
    expect(loop.settled).toBe(true);
    expect(loop.value?.passed).toBe(true);
    expect(loop.settledAt).toBe(calls[0]);
    expect(vi.getTimerCount()).toBe(0); // no next check scheduled
  });

  it('fails at the overall deadline with a reason naming the probe and the time waited', async () => {
    const { check, calls } = scripted([false], 'tcp_port 127.0.0.1:9');
    const t0 = Date.now();
    const loop = track(
      runProbeLoop({
        check,
        delayMs: 0,
        intervalMs: 50,
        threshold: 1,
        deadlineMs: 300,
        startedAt: t0,
        label: 'readiness probe',
      }),
    );
    await vi.advanceTimersByTimeAsync(299);
    expect(loop.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.settled).toBe(true);
    expect(loop.settledAt).toBe(t0 + 300);
    const out = loop.value!;
    expect(out.passed).toBe(false);
    if (out.passed) return;
    expect(out.timedOut).toBe(true);
    expect(out.aborted).toBe(false);
    // checks at 0, 50, …, 250; none at the deadline itself
    expect(calls.map((c) => c - t0)).toEqual([0, 50, 100, 150, 200, 250]);
    expect(out.checks).toBe(6);
    expect(out.reason).toBe(
      'readiness probe tcp_port 127.0.0.1:9 did not pass within 300 ms (6 checks; last check: down#6)',
    );
  });

  it('cuts a check that outlives the deadline', async () => {
    const { check, calls } = scripted(['hang']);
    const t0 = Date.now();
    const loop = track(
      runProbeLoop({
        check,
        delayMs: 0,
        intervalMs: 10,
        threshold: 1,
        deadlineMs: 200,
        eachCheckTimeoutMs: 10_000,
      }),
    );
    await vi.advanceTimersByTimeAsync(199);
    expect(loop.settled).toBe(false);
    // the hanging check ignores its signal: the loop gives up on it shortly after the
    // deadline, long before the check's own 10 s limit
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.settled).toBe(true);
    expect(loop.value).toMatchObject({ passed: false, timedOut: true, checks: 0 });
    expect(loop.settledAt! - t0).toBeGreaterThanOrEqual(200);
    expect(loop.settledAt! - t0).toBeLessThan(10_000);
    expect(calls).toHaveLength(1);
  });

  it('treats a check that throws or ignores its time limit as not met', async () => {
    const { check } = scripted(['throw', 'hang', true]);
    const seen: ProbeLoopResultEvent[] = [];
    const loop = track(
      runProbeLoop({
        check,
        delayMs: 0,
        intervalMs: 10,
        threshold: 1,
        eachCheckTimeoutMs: 50,
        onResult: (r) => seen.push(r),
      }),
    );
    await vi.runAllTimersAsync();
    expect(loop.value?.passed).toBe(true);
    expect(seen.map((r) => [r.ok, r.detail])).toEqual([
      [false, 'boom'],
      [false, 'no answer within 50 ms'],
      [true, 'up'],
    ]);
  });

  it('ends at a check that can never run again (regex time limit), reporting it', async () => {
    let n = 0;
    const check: ProbeCheck = {
      kind: 'log_watch',
      describe: () => 'log_watch "re:^(a+)+$"',
      check: () =>
        Promise.resolve(
          ++n < 2 ? { ok: false, detail: '0/1 matches' } : { ok: false, detail: 'stopped', limit: 'stopped' },
        ),
    };
    const p = runProbeLoop({ check, delayMs: 0, intervalMs: 1000, threshold: 1, deadlineMs: 600_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    const out = await p;
    expect(out).toMatchObject({
      passed: false,
      timedOut: false,
      aborted: false,
      limit: 'stopped',
      checks: 2,
    });
    expect(n).toBe(2); // not called again
  });

  it('stops when aborted, also during the initial delay', async () => {
    const { check, calls } = scripted([false]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    const loop = track(
      runProbeLoop({
        check,
        delayMs: 10_000,
        intervalMs: 10,
        threshold: 1,
        signal: ac.signal,
      }),
    );
    await vi.advanceTimersByTimeAsync(49);
    expect(loop.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.settled).toBe(true);
    expect(loop.settledAt).toBe(t0 + 50); // at the abort, not at the end of the delay
    expect(loop.value).toMatchObject({ passed: false, aborted: true, reason: 'aborted', checks: 0 });
    expect(calls).toEqual([]);
  });

  it('counts delay and deadline from the attempt start', async () => {
    const { check, calls } = scripted([true]);
    const startedAt = Date.now() - 1000; // the attempt started a second ago
    const loop = track(runProbeLoop({ check, delayMs: 500, intervalMs: 10, threshold: 1, startedAt }));
    await vi.advanceTimersByTimeAsync(0);
    expect(loop.settled).toBe(true);
    expect(calls).toEqual([startedAt + 1000]); // at once: no second delay
  });

  it('never spins faster than 20 ms with interval 0', async () => {
    const { check, calls } = scripted([false, false, false, true]);
    const loop = track(runProbeLoop({ check, delayMs: 0, intervalMs: 0, threshold: 1 }));
    await vi.runAllTimersAsync();
    expect(loop.value?.passed).toBe(true);
    expect(calls.map((c) => c - calls[0])).toEqual([0, 20, 40, 60]);
  });
});

describe('formatWait', () => {
  it('formats durations', () => {
    expect(formatWait(250)).toBe('250 ms');
    expect(formatWait(1500)).toBe('1.5 s');
    expect(formatWait(20 * 60_000)).toBe('20 min');
    expect(formatWait(61_000)).toBe('1 min 1 s');
  });
});
