/**
 * Errors of the expression engine. They are plain `Error`s; the config resolver turns them into
 * `SflowError`s with file locations and source hints (spec config.md 3.7).
 */

/** Malformed template or expression, including unknown filters/tests. Raised by `compileTemplate`. */
export class ExprSyntaxError extends Error {
  /** character offset of the problem inside the template source string */
  readonly offset: number;
  /** the `${{ … }}` part (or the unterminated tail) the problem is in */
  readonly expression: string;

  constructor(message: string, offset: number, expression: string) {
    super(message);
    this.name = 'ExprSyntaxError';
    this.offset = offset;
    this.expression = expression;
  }
}

/** A name, attribute, key or index that does not exist (Jinja2 StrictUndefined). */
export class ExprUndefinedError extends Error {
  /** the failing sub-expression as written, e.g. `variables.NOPE` */
  readonly expression: string;
  /** the missing name, attribute or key (`NOPE`); '' when not a lookup */
  readonly name_: string;

  constructor(message: string, expression: string, name: string) {
    super(message);
    this.name = 'ExprUndefinedError';
    this.expression = expression;
    this.name_ = name;
  }
}

/** Any other evaluation failure (type error, division by zero, range too big…). */
export class ExprEvalError extends Error {
  /** the failing sub-expression as written, e.g. `X + 1` */
  readonly expression: string;

  constructor(message: string, expression: string) {
    super(message);
    this.name = 'ExprEvalError';
    this.expression = expression;
  }
}

/**
 * Thrown by the value operations (ops.ts, filters.ts) that do not know the expression text; the
 * compiled closure catches it and rethrows an `ExprEvalError` naming its sub-expression.
 */
export class OpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpError';
  }
}

/** Python's error for `int()` of an infinity (OverflowError) or NaN (ValueError), same words */
export function floatToIntError(x: number): OpError {
  return new OpError(`cannot convert float ${Number.isNaN(x) ? 'NaN' : 'infinity'} to integer`);
}

export function isExprError(e: unknown): e is ExprSyntaxError | ExprUndefinedError | ExprEvalError {
  return e instanceof ExprSyntaxError || e instanceof ExprUndefinedError || e instanceof ExprEvalError;
}
