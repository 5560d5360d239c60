/**
 * What the engine's errors carry (class, name, the failing part) and where its bounds fall
 * exactly: a result of the maximum size is allowed and one more item is not; a plan build may
 * build exactly its budget.
 */
import { describe, expect, it } from 'vitest';
import {
  EXPR_LIMITS,
  ExprEvalError,
  ExprSyntaxError,
  ExprUndefinedError,
  compileTemplate,
  isExprError,
  renderTemplate,
  withExpressionBudget,
} from '../../../src/config/expr/index.js';
import { OpError } from '../../../src/config/expr/errors.js';
import { e, thrown } from './helpers.js';

describe('errors', () => {
  it('a syntax error names itself, its offset and the part it is in', () => {
    const err = thrown(() => compileTemplate('a ${{ 1 + }} b')) as ExprSyntaxError;
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.name).toBe('ExprSyntaxError');
    expect(err.expression).toBe('${{ 1 + }}');
    expect(isExprError(err)).toBe(true);
  });

  it('an undefined name names itself, the sub-expression and the missing name', () => {
    const err = thrown(() => e('variables.NOPE + 1', { variables: {} })) as ExprUndefinedError;
    expect(err).toBeInstanceOf(ExprUndefinedError);
    expect(err.name).toBe('ExprUndefinedError');
    expect(err.expression).toBe('variables.NOPE');
    expect(err.name_).toBe('NOPE');
    expect(isExprError(err)).toBe(true);
  });

  it('an evaluation error names itself and the failing sub-expression', () => {
    const err = thrown(() => e("[1, N / 0, 'x']", { N: 1 })) as ExprEvalError;
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.name).toBe('ExprEvalError');
    expect(err.expression).toBe('N / 0');
    expect(err.message).toContain('division by zero');
    expect(isExprError(err)).toBe(true);
  });

  it('only the three public errors are expression errors', () => {
    expect(new OpError('x').name).toBe('OpError');
    expect(isExprError(new OpError('x'))).toBe(false);
    expect(isExprError(new Error('x'))).toBe(false);
    expect(isExprError('ExprEvalError')).toBe(false);
  });
});

describe('bounds, at the edge', () => {
  it(`a result of exactly ${EXPR_LIMITS.maxSize} items is allowed, one more is not`, () => {
    expect(e(`('x' * ${EXPR_LIMITS.maxSize}) | length`, {})).toBe(String(EXPR_LIMITS.maxSize));
    expect(e(`([0] * ${EXPR_LIMITS.maxSize}) | length`, {})).toBe(String(EXPR_LIMITS.maxSize));
    const err = thrown(() => e(`'x' * ${EXPR_LIMITS.maxSize + 1}`, {}));
    expect(err.message).toContain(`result too large (${EXPR_LIMITS.maxSize + 1} characters or items`);
  });

  it('a plan build may build exactly its budget, and not one item more', () => {
    const chunk = EXPR_LIMITS.maxSize;
    const t = compileTemplate(`\${{ 'x' * ${chunk} }}`);
    let renders = 0;
    const err = thrown(() =>
      withExpressionBudget(() => {
        for (;;) {
          renderTemplate(t, {});
          renders++;
        }
      }),
    );
    expect(renders).toBe(EXPR_LIMITS.planBudget / chunk);
    expect(err.message).toContain('characters or items in all');
  });

  it('budgets nest: an inner build has its own, and the outer one goes on after it', () => {
    const t = compileTemplate(`\${{ 'x' * ${EXPR_LIMITS.maxSize} }}`);
    const per = EXPR_LIMITS.planBudget / EXPR_LIMITS.maxSize;
    withExpressionBudget(() => {
      for (let i = 0; i < per - 1; i++) renderTemplate(t, {});
      withExpressionBudget(() => {
        for (let i = 0; i < per; i++) renderTemplate(t, {});
      });
      renderTemplate(t, {});
      expect(thrown(() => renderTemplate(t, {})).message).toContain('in all');
    });
  });
});
