/**
 * `assert:` after result parsing: each expression is evaluated with the task's parsed values as
 * `result.<name>` (plus the names the plan froze for it) and must be truthy (Python rules). An
 * expression that cannot be evaluated (a value that was not parsed, a type error) fails too.
 */
import { compileCached } from '../config/templates.js';
import { PyFloat, isExprError, reprValue, type Scope, type Value } from '../config/expr/index.js';
import { truthy } from '../config/expr/ops.js';
import type { PlannedAssertion } from '../plan/types.js';
import type { AssertionOutcome } from '../events/events.js';
import { PyFloat as ResultFloat } from './json-write.js';

const SEEN_MAX = 200;

/** A parsed result value as an expression value (floats keep their float-ness: `40.0`). */
function asValue(v: unknown, depth = 0): Value {
  if (v instanceof ResultFloat) return new PyFloat(v.value);
  if (v === undefined || depth > 100) return null;
  if (Array.isArray(v)) return v.map((x) => asValue(x, depth + 1));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, Value> = {};
    for (const [k, x] of Object.entries(v)) out[k] = asValue(x, depth + 1);
    return out;
  }
  return v as Value;
}

function lookup(scope: Scope, path: ReadonlyArray<string | number>): { found: boolean; value?: Value } {
  let cur: Value = scope;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || cur instanceof PyFloat) return { found: false };
    const next: unknown = (cur as Record<string | number, unknown>)[seg];
    if (next === undefined || !Object.prototype.hasOwnProperty.call(cur, seg)) return { found: false };
    cur = next as Value;
  }
  return { found: true, value: cur };
}

function pathText(path: ReadonlyArray<string | number>): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

export function checkAssertions(
  asserts: PlannedAssertion[],
  values: Record<string, unknown>,
): AssertionOutcome[] {
  const result = asValue(values);
  return asserts.map((a) => {
    const scope: Scope = { ...(asValue(a.bindings) as Scope), result };
    const t = compileCached(a.source);
    const seen: Record<string, string> = {};
    for (const ref of t.references()) {
      const r = lookup(scope, ref);
      const text = r.found ? reprValue(r.value as Value) : '<missing>';
      seen[pathText(ref)] = text.length > SEEN_MAX ? `${text.slice(0, SEEN_MAX - 1)}…` : text;
    }
    try {
      const ok = truthy(t.expressions[0].evaluate(scope));
      return { expr: a.source, ok, seen };
    } catch (e) {
      if (!isExprError(e)) throw e;
      return { expr: a.source, ok: false, seen, error: e.message.split('\n')[0] };
    }
  });
}

/** The task's failure reason when an assertion failed: expressions, values seen, result file. */
export function assertionFailure(
  outcomes: AssertionOutcome[],
  resultPath: string | undefined,
): string | undefined {
  const bad = outcomes.filter((o) => !o.ok);
  if (bad.length === 0) return undefined;
  const parts = bad.map((o) => {
    const seen = Object.entries(o.seen)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    return `${o.expr}${seen ? ` with ${seen}` : ''}${o.error ? ` (${o.error})` : ''}`;
  });
  const head = bad.length === 1 ? 'assertion failed' : `${bad.length} assertions failed`;
  return `${head}: ${parts.join('; ')}${resultPath ? ` (result file: ${resultPath})` : ''}`;
}
