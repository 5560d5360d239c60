/**
 * Longest delay a recipe may ask for (retry intervals with their backoff, probe delays, intervals
 * and timeouts): 24 days. Node's timers hold at most 2^31-1 ms (~24.8 days) and fire at once
 * beyond, so a longer delay is a located plan error rather than an immediate retry.
 */
export const MAX_DELAY_S = 24 * 86_400;

/** Throws a located plan error when `seconds` (what `what` asks for) exceeds MAX_DELAY_S. */
export function checkDelay(seconds: number, what: string, where: Where): void {
  if (seconds <= MAX_DELAY_S) return;
  const shown = Number.isSafeInteger(seconds) ? `${seconds} s` : `about ${seconds.toExponential(1)} s`;
  throw planError(
    where,
    'plan.delay_too_long',
    `${what} is ${shown}; delays are limited to ${MAX_DELAY_S} s (24 days)`,
    'use a shorter interval (or a smaller backoff / fewer retries)',
  );
}

/**
 * The cap on task instances in one plan: replicas (`count`) and sweeps (the product of the swept
 * domains) expand one declared task into many, and every instance costs memory and time before
 * anything runs. Default 10,000 in all; `SFLOW_MAX_TASKS=<n>` raises (or lowers) it.
 */
import { SflowError } from '../util/sflow-error.js';
import { planError, type Where } from '../config/resolve.js';

export const DEFAULT_MAX_TASKS = 10_000;

/** The cap from SFLOW_MAX_TASKS (a whole number ≥ 1), or the default. */
export function maxTaskInstances(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SFLOW_MAX_TASKS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_MAX_TASKS;
  const n = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new SflowError('plan.max_tasks_value', `SFLOW_MAX_TASKS must be a whole number ≥ 1, got '${raw}'`, {
      phase: 'plan',
    });
  }
  return n;
}

/** Task instances still allowed in the plan being built. */
export class InstanceBudget {
  private used = 0;
  constructor(readonly limit: number = maxTaskInstances()) {}

  /** Reserve `n` instances of task `base` (before building them); a located error past the cap. */
  take(n: number, base: string, where: Where): void {
    if (this.used + n <= this.limit) {
      this.used += n;
      return;
    }
    const many = Number.isSafeInteger(n) ? String(n) : n.toExponential(1);
    const before = this.used > 0 ? ` (after ${this.used} instance(s) of earlier tasks)` : '';
    throw planError(
      where,
      'plan.too_many_tasks',
      `task '${base}' expands to ${many} instance(s)${before}; a plan holds at most ${this.limit} task instances`,
      `SFLOW_MAX_TASKS=<n> raises the cap (default ${DEFAULT_MAX_TASKS}); each instance costs memory before anything runs`,
    );
  }
}
