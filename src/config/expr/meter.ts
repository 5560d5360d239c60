/**
 * Bounds on expression evaluation, so that no `${{ }}` can exhaust time or memory:
 *
 * - every string or list an operation builds is at most `maxSize` characters / items;
 * - one evaluation (one template) may do at most `maxSteps` units of work (elements visited,
 *   characters built) — the language has no loops, so the work is in operations on big values;
 * - within `withExpressionBudget` (one plan build), all evaluations together may build at most
 *   `planBudget` characters / items, which bounds what a plan of many replicas retains.
 *
 * Failures are `OpError`s, which the evaluator reports as located expression errors.
 */
import { OpError } from './errors.js';

export const EXPR_LIMITS = {
  /** characters of one string, items of one list */
  maxSize: 1_000_000,
  /** work units of one evaluation */
  maxSteps: 5_000_000,
  /** characters / items built by all evaluations of one plan build */
  planBudget: 64_000_000,
} as const;

let steps = 0;
/** inside an evaluation: the meter counts only there (value helpers also run outside) */
let active = false;
let budget: { left: number } | null = null;

/** Runs one top-level evaluation (synchronous) under a fresh step count. */
export function metered<T>(fn: () => T): T {
  if (active) return fn();
  active = true;
  steps = 0;
  try {
    return fn();
  } finally {
    active = false;
  }
}

/** `n` units of work. */
export function tick(n = 1): void {
  if (!active) return;
  steps += n;
  if (steps > EXPR_LIMITS.maxSteps)
    throw new OpError(`expression needs more than ${EXPR_LIMITS.maxSteps} evaluation steps`);
}

/** Throws when a string or list of `n` characters / items would be too large (no work counted). */
export function capped(n: number): void {
  if (active && n > EXPR_LIMITS.maxSize)
    throw new OpError(
      `result too large (${n > 1e15 ? 'about ' + n.toExponential(1) : n} characters or items; at most ${EXPR_LIMITS.maxSize})`,
    );
}

/** A string or list of `n` characters / items is about to be built. */
export function sized(n: number): void {
  if (!active) return;
  capped(n);
  tick(n);
  if (budget) {
    budget.left -= n;
    if (budget.left < 0)
      throw new OpError(
        `the expressions of this recipe build more than ${EXPR_LIMITS.planBudget} characters or items in all`,
      );
  }
}

/** Runs `fn` (synchronous) with one budget for everything its evaluations build. */
export function withExpressionBudget<T>(fn: () => T): T {
  const outer = budget;
  budget = { left: EXPR_LIMITS.planBudget };
  try {
    return fn();
  } finally {
    budget = outer;
  }
}
