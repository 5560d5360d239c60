/**
 * Expression resolution for plan-time fields: render `${{ }}` strings against a scope, convert
 * to the types fields need, and turn evaluation failures into located plan errors.
 */
import { SflowError } from '../util/sflow-error.js';
import type { Expr } from './schema/common.js';
import { formatPath, locate, type PathSeg } from './source.js';
import { compileCached } from './templates.js';
import {
  ExprEvalError,
  ExprUndefinedError,
  evaluateTemplate,
  hasExpression,
  renderTemplate,
  renderValue,
  toNative,
  type Scope,
  type Value,
} from './expr/index.js';

/** Where a value came from: the merged document (for positions) and its path in it. */
export interface Where {
  doc: unknown;
  path: PathSeg[];
}

export function planError(
  where: Where | undefined,
  code: string,
  message: string,
  hint?: string,
): SflowError {
  return new SflowError(code, message, {
    phase: 'plan',
    location: where ? locate(where.doc, where.path) : undefined,
    hint,
  });
}

function exprError(e: unknown, source: string, where: Where | undefined): never {
  const at = where ? ` (${formatPath(where.path)})` : '';
  if (e instanceof ExprUndefinedError) {
    throw planError(
      where,
      'plan.undefined',
      `Undefined variable in expression \${{ ${e.expression} }}${at}: ${e.message}`,
      'check the spelling; variables are read as ${{ variables.NAME }} or ${{ NAME }}, nodes as ${{ backends.B.nodes[0].ip_address }}',
    );
  }
  if (e instanceof ExprEvalError) {
    throw planError(
      where,
      'plan.eval',
      `Error evaluating expression ${JSON.stringify(source)}${at}: ${e.message}`,
      textArithmeticHint(e.message),
    );
  }
  throw e;
}

/**
 * Arithmetic that mixes text and numbers ("'int' and 'str'") almost always means a variable
 * without `type:` whose value is text (a `--set N=4` or a quoted "4" stays a string).
 */
function textArithmeticHint(message: string): string | undefined {
  if (!/'str'.*'(int|float)'|'(int|float)'.*'str'|concatenate str \(not "(int|float)"\)/.test(message))
    return undefined;
  return "a variable without 'type:' holds text here; declare 'type: integer' (or 'type: float') on it, or convert in the expression with '| int' / '| float'";
}

/** Render a field to its string form (Python str of each expression), or return non-strings unchanged. */
export function renderField(value: string, scope: Scope, where?: Where): string {
  if (!hasExpression(value)) return value;
  try {
    return renderTemplate(compileCached(value), scope);
  } catch (e) {
    return exprError(e, value, where);
  }
}

/** Evaluate a field to a native value: a string that is one expression yields its value. */
export function evaluateField(value: unknown, scope: Scope, where?: Where): Value {
  if (typeof value !== 'string' || !hasExpression(value)) return value as Value;
  try {
    return evaluateTemplate(compileCached(value), scope);
  } catch (e) {
    return exprError(e, value, where);
  }
}

/**
 * A recipe entry after `resolveDeep`: every string is rendered, so a field that could hold a
 * `\${{ }}` expression holds its text; shapes are kept.
 */
export type Resolved<T> = T extends Expr
  ? string
  : T extends ReadonlyArray<infer E>
    ? Array<Resolved<E>>
    : T extends object
      ? { [K in keyof T]: Resolved<T[K]> }
      : T;

/** Resolve every string inside a structure (operator configs, backend fields), keeping shapes. */
export function resolveDeep<T>(value: T, scope: Scope, where: Where): Resolved<T> {
  // the walk keeps every shape and renders strings to strings: what Resolved<T> says
  return resolveWalk(value, scope, where) as Resolved<T>;
}

function resolveWalk(value: unknown, scope: Scope, where: Where): unknown {
  if (typeof value === 'string') return renderField(value, scope, where);
  if (Array.isArray(value))
    return value.map((v, i) => resolveWalk(v, scope, { doc: where.doc, path: [...where.path, i] }));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = resolveWalk(v, scope, { doc: where.doc, path: [...where.path, k] });
    return out;
  }
  return value;
}

/**
 * Integer fields: literal ints pass; expressions are rendered and parsed base-10 (spec config.md
 * §3.5). Booleans and fractions are rejected.
 */
export function resolveInt(value: unknown, scope: Scope, where: Where, field: string): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value;
    throw planError(
      where,
      'plan.not_int',
      `${field} must be an integer${Number.isInteger(value) ? ' within ±2^53' : ''}, got ${value}`,
    );
  }
  if (typeof value === 'boolean') {
    throw planError(where, 'plan.not_int', `${field} must resolve to int, got '${renderValue(value)}'`);
  }
  const s = typeof value === 'string' ? renderField(value, scope, where).trim() : String(value);
  if (!/^[-+]?\d+$/.test(s)) {
    throw planError(
      where,
      'plan.not_int',
      `${field} must resolve to int, got '${s}'`,
      'the expression must produce a whole number',
    );
  }
  const n = parseInt(s, 10);
  if (!Number.isSafeInteger(n))
    throw planError(where, 'plan.not_int', `${field} must be an integer within ±2^53, got '${s}'`);
  return n;
}

export function resolveOptionalInt(
  value: unknown,
  scope: Scope,
  where: Where,
  field: string,
): number | undefined {
  return value === undefined || value === null ? undefined : resolveInt(value, scope, where, field);
}

/** A list of ints written as a list (items may be expressions) or as one expression yielding a list or an int. */
export function resolveIntList(
  value: unknown,
  scope: Scope,
  where: Where,
  field: string,
): number[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value))
    return value.map((v, i) => resolveInt(v, scope, { doc: where.doc, path: [...where.path, i] }, field));
  const v = typeof value === 'string' ? toNative(evaluateField(value, scope, where)) : value;
  if (Array.isArray(v)) return v.map((x) => resolveInt(x, scope, where, field));
  if (typeof v === 'string' && /^\s*\[.*\]\s*$/.test(v)) {
    const inner = v.trim().slice(1, -1).trim();
    return inner === '' ? [] : inner.split(',').map((x) => resolveInt(x.trim(), scope, where, field));
  }
  return [resolveInt(v, scope, where, field)];
}

export function resolveString(value: unknown, scope: Scope, where: Where): string {
  if (typeof value === 'string') return renderField(value, scope, where);
  return renderValue(value as Value);
}
