import { describe, expect, it } from 'vitest';
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

describe('runProbeLoop', () => {
  it('runs the first check at delay, then every interval, and passes after threshold consecutive successes', async () => {
    const { check, calls } = scripted([false, true, false, true, true]);
    const seen: ProbeLoopResultEvent[] = [];
    const t0 = Date.now();
    const out = await runProbeLoop({
      check,
      delayMs: 100,
      intervalMs: 40,
      threshold: 2,
      startedAt: t0,
      onResult: (r) => seen.push(r),
    });
    expect(out).toMatchObject({ passed: true, checks: 5, last: { ok: true, detail: 'up' } });
    expect(calls[0] - t0).toBeGreaterThanOrEqual(99);
    expect(calls[0] - t0).toBeLessThan(160);
    for (let i = 1; i < calls.length; i++) {
      expect(calls[i] - calls[i - 1]).toBeGreaterThanOrEqual(39);
      expect(calls[i] - calls[i - 1]).toBeLessThan(100);
    }
    expect(seen.map((r) => r.consecutive)).toEqual([0, 1, 0, 1, 2]);
    expect(seen.map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
  });

  it('resolves right after the passing check, not on a later tick', async () => {
    const { check, calls } = scripted([true]);
    const out = await runProbeLoop({ check, delayMs: 0, intervalMs: 1000, threshold: 1 });
    expect(out.passed).toBe(true);
    expect(Date.now() - calls[0]).toBeLessThan(20);
  });

  it('fails at the overall deadline with a reason naming the probe and the time waited', async () => {
    const { check } = scripted([false], 'tcp_port 127.0.0.1:9');
    const t0 = Date.now();
    const out = await runProbeLoop({
      check,
      delayMs: 0,
      intervalMs: 50,
      threshold: 1,
      deadlineMs: 300,
      startedAt: t0,
      label: 'readiness probe',
    });
    expect(out.passed).toBe(false);
    if (out.passed) return;
    expect(out.timedOut).toBe(true);
    expect(out.aborted).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(299);
    expect(Date.now() - t0).toBeLessThan(450);
    expect(out.reason).toMatch(
      /^readiness probe tcp_port 127\.0\.0\.1:9 did not pass within (3\d\d ms|0\.3 s) \(\d+ checks; last check: down#\d+\)$/,
    );
    expect(out.checks).toBeGreaterThanOrEqual(5);
  });

  it('cuts a check that outlives the deadline', async () => {
    const { check } = scripted(['hang']);
    const t0 = Date.now();
    const out = await runProbeLoop({
      check,
      delayMs: 0,
      intervalMs: 10,
      threshold: 1,
      deadlineMs: 200,
      eachCheckTimeoutMs: 10_000,
    });
    expect(out).toMatchObject({ passed: false, timedOut: true });
    expect(Date.now() - t0).toBeLessThan(700);
  });

  it('treats a check that throws or ignores its time limit as not met', async () => {
    const { check } = scripted(['throw', 'hang', true]);
    const seen: ProbeLoopResultEvent[] = [];
    const out = await runProbeLoop({
      check,
      delayMs: 0,
      intervalMs: 10,
      threshold: 1,
      eachCheckTimeoutMs: 50,
      onResult: (r) => seen.push(r),
    });
    expect(out.passed).toBe(true);
    expect(seen.map((r) => [r.ok, r.detail])).toEqual([
      [false, 'boom'],
      [false, 'no answer within 50 ms'],
      [true, 'up'],
    ]);
  });

  it('stops when aborted, also during the initial delay', async () => {
    const { check, calls } = scripted([false]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    const out = await runProbeLoop({
      check,
      delayMs: 10_000,
      intervalMs: 10,
      threshold: 1,
      signal: ac.signal,
    });
    expect(out).toMatchObject({ passed: false, aborted: true, reason: 'aborted', checks: 0 });
    expect(calls).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('counts delay and deadline from the attempt start', async () => {
    const { check, calls } = scripted([true]);
    const startedAt = Date.now() - 1000; // the attempt started a second ago
    await runProbeLoop({ check, delayMs: 500, intervalMs: 10, threshold: 1, startedAt });
    expect(calls[0] - startedAt).toBeLessThan(1100); // no second delay
  });

  it('never spins faster than 20 ms with interval 0', async () => {
    const { check, calls } = scripted([false, false, false, true]);
    await runProbeLoop({ check, delayMs: 0, intervalMs: 0, threshold: 1 });
    expect(calls[3] - calls[0]).toBeGreaterThanOrEqual(58);
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
