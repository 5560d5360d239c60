/**
 * The probe scheduler at its edges (src/probes/loop.ts): the boundaries of formatWait, the words
 * of a deadline met before any check ran and after one, a deadline of 0 meaning none, what a
 * check is told about its own limit, a stop from the caller reaching the check in flight, and the
 * times a result carries. On vitest's fake clock, so every time asserted is exact.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatWait, runProbeLoop } from '../../../src/probes/loop.js';
import type { CheckResult, ProbeCheck, ProbeLoopResultEvent } from '../../../src/probes/types.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function answering(results: boolean[]) {
  const asked: Array<{ limit: number; signal: AbortSignal }> = [];
  const check: ProbeCheck = {
    kind: 'tcp_port',
    describe: () => 'tcp_port 127.0.0.1:8000',
    check(signal, limit): Promise<CheckResult> {
      asked.push({ limit, signal });
      const ok = results[Math.min(asked.length - 1, results.length - 1)];
      return Promise.resolve({ ok, detail: ok ? 'open' : 'refused' });
    },
  };
  return { check, asked };
}

describe('formatWait at its boundaries', () => {
  it('switches to seconds at one second and to minutes at one minute', () => {
    expect(formatWait(999)).toBe('999 ms');
    expect(formatWait(1000)).toBe('1 s');
    expect(formatWait(59_900)).toBe('59.9 s');
    expect(formatWait(60_000)).toBe('1 min');
  });
});

describe('runProbeLoop edges', () => {
  it('says no check ran when the deadline comes before the first one', async () => {
    const { check, asked } = answering([true]);
    const p = runProbeLoop({ check, delayMs: 5000, intervalMs: 100, threshold: 1, deadlineMs: 2000 });
    await vi.advanceTimersByTimeAsync(2000);
    const out = await p;
    expect(asked).toHaveLength(0);
    expect(out).toMatchObject({ passed: false, timedOut: true, aborted: false, checks: 0, elapsedMs: 2000 });
    expect(!out.passed && out.reason).toBe(
      'probe tcp_port 127.0.0.1:8000 did not pass within 2 s (0 checks)',
    );
  });

  it('counts one check in the singular, with its last detail', async () => {
    const { check } = answering([false]);
    const p = runProbeLoop({
      check,
      delayMs: 0,
      intervalMs: 5000,
      threshold: 1,
      deadlineMs: 3000,
      label: 'readiness probe',
    });
    await vi.advanceTimersByTimeAsync(3000);
    const out = await p;
    expect(!out.passed && out.reason).toBe(
      'readiness probe tcp_port 127.0.0.1:8000 did not pass within 3 s (1 check; last check: refused)',
    );
  });

  it('takes a deadline of 0 as none', async () => {
    const { check } = answering([false, false, true]);
    const p = runProbeLoop({ check, delayMs: 0, intervalMs: 1000, threshold: 1, deadlineMs: 0 });
    await vi.advanceTimersByTimeAsync(2000);
    expect(await p).toMatchObject({ passed: true, checks: 3, elapsedMs: 2000 });
  });

  it('tells each check its own limit, and the times of its result', async () => {
    const { check, asked } = answering([false, true]);
    const seen: ProbeLoopResultEvent[] = [];
    const p = runProbeLoop({
      check,
      delayMs: 100,
      intervalMs: 1000,
      threshold: 1,
      eachCheckTimeoutMs: 5000,
      onResult: (r) => seen.push(r),
    });
    await vi.advanceTimersByTimeAsync(1100);
    const out = await p;
    expect(asked.map((a) => a.limit)).toEqual([5000, 5000]);
    expect(seen.map((r) => r.tookMs)).toEqual([0, 0]);
    expect(out).toMatchObject({ passed: true, checks: 2, elapsedMs: 1100 });
  });

  it('passes a stop from the caller to the check in flight, and counts that check as none', async () => {
    let cut: AbortSignal | undefined;
    const check: ProbeCheck = {
      kind: 'exec',
      describe: () => 'exec "wait"',
      check: (signal) =>
        new Promise<CheckResult>((resolve) => {
          cut = signal;
          signal.addEventListener('abort', () => resolve({ ok: false, detail: 'check cut short' }));
        }),
    };
    const ac = new AbortController();
    const p = runProbeLoop({ check, delayMs: 0, intervalMs: 1000, threshold: 1, signal: ac.signal });
    await vi.advanceTimersByTimeAsync(50);
    expect(cut?.aborted).toBe(false);
    ac.abort();
    await vi.advanceTimersByTimeAsync(0);
    const out = await p;
    expect(cut?.aborted).toBe(true);
    expect(out).toMatchObject({
      passed: false,
      aborted: true,
      timedOut: false,
      checks: 0,
      reason: 'aborted',
    });
  });
});
