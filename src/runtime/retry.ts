/** Retry policy (config.md 5.8): total attempts = 1 + count; delay interval × backoff^(k-1). */
import type { PlannedRetries } from '../plan/types.js';

/** May failed attempt `k` (1-based) be followed by another? */
export function canRetry(retries: PlannedRetries | null, failedAttempt: number): boolean {
  return !!retries && failedAttempt <= retries.count;
}

/** Seconds to wait after failed attempt `k` before the next one. */
export function retryDelayS(retries: PlannedRetries, failedAttempt: number): number {
  const backoff = retries.backoff > 0 ? retries.backoff : 1;
  return Math.max(0, retries.intervalS) * Math.pow(backoff, Math.max(0, failedAttempt - 1));
}

export function totalAttempts(retries: PlannedRetries | null): number {
  return 1 + (retries?.count ?? 0);
}
