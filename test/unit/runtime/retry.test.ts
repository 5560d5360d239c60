/** The retry policy (config.md 5.8): how many attempts, and the wait after each failed one. */
import { describe, expect, it } from 'vitest';
import { canRetry, retryDelayS, totalAttempts } from '../../../src/runtime/retry.js';

describe('retry policy', () => {
  it('counts attempts: one plus the retries', () => {
    expect(totalAttempts(null)).toBe(1);
    expect(totalAttempts({ count: 2, intervalS: 1, backoff: 1 })).toBe(3);
    expect(canRetry(null, 1)).toBe(false);
    expect(canRetry({ count: 2, intervalS: 1, backoff: 1 }, 2)).toBe(true);
    expect(canRetry({ count: 2, intervalS: 1, backoff: 1 }, 3)).toBe(false);
    expect(canRetry({ count: 0, intervalS: 1, backoff: 1 }, 1)).toBe(false);
  });

  it('waits interval × backoff^(k-1); a backoff of zero or less means none, a negative interval none', () => {
    const r = { count: 5, intervalS: 2, backoff: 3 };
    expect([1, 2, 3].map((k) => retryDelayS(r, k))).toEqual([2, 6, 18]);
    expect([1, 2, 3].map((k) => retryDelayS({ ...r, backoff: 0 }, k))).toEqual([2, 2, 2]);
    expect([1, 2, 3].map((k) => retryDelayS({ ...r, backoff: -2 }, k))).toEqual([2, 2, 2]);
    expect(retryDelayS({ ...r, intervalS: -1 }, 2)).toBe(0);
    expect(retryDelayS(r, 0)).toBe(2);
  });
});
