/**
 * Every expression ends in a clear evaluation error, in bounded time and memory, however hostile:
 * results are capped in size, one evaluation in work, and one plan build in everything it builds.
 * Assertions are on the error; none of these cases would finish (or fit in memory) unbounded.
 */
import { describe, expect, it } from 'vitest';
import { ExprEvalError, ExprSyntaxError } from '../../../src/config/expr/index.js';
import { EXPR_LIMITS, withExpressionBudget } from '../../../src/config/expr/meter.js';
import { e, r, thrown } from './helpers.js';

describe('expression bounds', () => {
  it.each([
    ["'%0999999999d' % 1", 'result too large'],
    ["'%.999999999f' % 1.5", 'result too large'],
    ["'%*d' % (999999999, 1)", 'result too large'],
    ["'%s' % ('x' * 999999) ~ 'yy'", 'result too large'],
    ["('%s%s' % ('x' * 600000, 'y' * 600000))", 'result too large'],
    ['[[1] * 999999] * 999999', 'result too large'],
    ["([[1] * 999999] * 999999) | join(',')", 'result too large'],
    ["[['x' * 999999] * 999] | tojson", 'result too large'],
    ['[1] | tojson(indent=999999999)', 'result too large'],
    ["('x' * 999999) | replace('x', 'yy')", 'result too large'],
    ["'abc' | replace('', 'x' * 999999)", 'result too large'],
    ['([[1] * 2000] * 1000) | sum(start=[]) | length', /result too large|evaluation steps/],
  ])('%s → %s', (src, msg: string | RegExp) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toMatch(msg);
  });

  it('bounds ~ concatenation', () => {
    const err = thrown(() => e("('a' * 600000) ~ ('a' * 600000)"));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain('result too large (1200000 characters or items; at most 1000000)');
  });

  it('bounds the work of one evaluation (comparisons of big shared values)', () => {
    const err = thrown(() => e('([1] * 9999 + [2]) in ([[1] * 10000] * 10000)'));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toBe(`expression needs more than ${EXPR_LIMITS.maxSteps} evaluation steps`);
    const work = thrown(() => e('((range(100000) | list) * 10) | unique | length'));
    expect(work.message).toContain('evaluation steps');
  });

  it('bounds everything one plan build evaluates', () => {
    const big = "${{ 'x' * 900000 }}";
    const err = thrown(() =>
      withExpressionBudget(() => {
        for (let i = 0; i < 100; i++) r(big);
      }),
    );
    expect(err.message).toContain(`more than ${EXPR_LIMITS.planBudget} characters or items in all`);
    // outside a plan build (and after it), the same template renders
    expect(r(big)).toHaveLength(900000);
  });

  it('refuses deep nesting at parse time', () => {
    const err = thrown(() => e('('.repeat(10_000) + '1' + ')'.repeat(10_000)));
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toContain('nested too deeply');
  });
});
