/**
 * Compilation of calls, filters and tests. Names and argument shapes are checked here, so an
 * unknown filter/test or a bad call surfaces from compileTemplate as a syntax error.
 */
import { didYouMean } from '../errors.js';
import type { Kwarg, Node } from './ast.js';
import { ExprEvalError, ExprUndefinedError, OpError } from './errors.js';
import { FILTERS, bindArgs, type Arg, type FilterSpec } from './filters.js';
import { TESTS } from './istests.js';
import { sized } from './meter.js';
import { type Scope, type Value, Missing, isIntLike, num, typeName, unwrap } from './values.js';
import { errorMessage } from '../../util/errors.js';

export type Ev = (s: Scope) => Value;
export type PEv = (s: Scope) => Value | Missing;

/**
 * What an undefined value becomes. strict: it throws; render: like strict, but `x if c` without
 * else gives ''; probe: it is returned as `Missing`. `R` is what `miss` yields: `never` for the
 * throwing modes, so a closure built under them is typed `(s) => Value`.
 */
export interface Mode<R extends Missing = Missing> {
  readonly name: 'strict' | 'render' | 'probe';
  miss(m: Missing, text: string): R;
}
const throwMissing = (m: Missing, text: string): never => {
  throw undefinedError(m, text);
};
export const STRICT: Mode<never> = { name: 'strict', miss: throwMissing };
export const RENDER: Mode<never> = { name: 'render', miss: throwMissing };
export const PROBE: Mode<Missing> = { name: 'probe', miss: (m) => m };

/** What the call/filter/test builders need from the compiler. */
export interface CompileCtx {
  strict(n: Node): Ev;
  build<R extends Missing>(n: Node, mode: Mode<R>): (s: Scope) => Value | R;
  text(n: Node): string;
  fail(msg: string, at: number): never;
}

/** Sandbox limit on range() sizes (Jinja2's MAX_RANGE). */
export const MAX_RANGE = 100_000;

export function rethrow(e: unknown, expr: string): unknown {
  return e instanceof OpError ? new ExprEvalError(e.message, expr) : e;
}

export function undefinedError(m: Missing, fallbackExpr: string): ExprUndefinedError {
  const expr = m.expr || fallbackExpr;
  return new ExprUndefinedError(m.reason ?? `'${expr}' is undefined`, expr, m.name);
}

function range(args: Value[]): Value[] {
  for (const a of args) {
    if (!isIntLike(a)) throw new OpError(`'${typeName(a)}' object cannot be interpreted as an integer`);
  }
  const n = args.map(num);
  const [start, stop, step] = n.length === 1 ? [0, n[0], 1] : [n[0], n[1], n[2] ?? 1];
  if (step === 0) throw new OpError('range() arg 3 must not be zero');
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > MAX_RANGE) throw new OpError(`range too big: more than ${MAX_RANGE} items`);
  sized(count);
  const out: Value[] = [];
  for (let i = 0; i < count; i++) out.push(start + i * step);
  return out;
}

export function buildCall(c: CompileCtx, n: Extract<Node, { kind: 'call' }>, text: string): Ev {
  if (n.callee.kind !== 'name' || n.callee.name !== 'range') {
    const what = n.callee.kind === 'attr' ? 'calling methods' : `calling '${c.text(n.callee)}'`;
    c.fail(`${what} is not supported; the only function available is range()`, n.start);
  }
  if (n.kwargs.length) c.fail('range() takes no keyword arguments', n.kwargs[0].at);
  if (n.args.length < 1 || n.args.length > 3) {
    c.fail(`range expected 1 to 3 arguments, got ${n.args.length}`, n.start);
  }
  const args = n.args.map((a) => c.strict(a));
  return (s) => {
    const vals = args.map((f) => unwrap(f(s)));
    try {
      return range(vals);
    } catch (e) {
      throw rethrow(e, text);
    }
  };
}

function compileArgs(c: CompileCtx, args: Node[], kwargs: Kwarg[]): [Ev[], [string, Ev][]] {
  return [args.map((a) => c.strict(a)), kwargs.map((k) => [k.name, c.strict(k.value)])];
}

export function buildFilter<R extends Missing>(
  c: CompileCtx,
  n: Extract<Node, { kind: 'filter' }>,
  mode: Mode<R>,
  text: string,
): (s: Scope) => Value | R {
  const spec = FILTERS[n.name];
  if (!spec) {
    const hint = didYouMean(n.name, Object.keys(FILTERS));
    c.fail(`unknown filter '${n.name}'${hint ? `; ${hint}` : ''}`, n.nameAt);
  }
  checkFilterArgs(c, n, spec);
  const onMissing = spec.onMissing;
  const input: PEv = onMissing ? c.build(n.obj, PROBE) : c.strict(n.obj);
  const [args, kwargs] = compileArgs(c, n.args, n.kwargs);
  return (s) => {
    const v = input(s);
    const a: Arg[] = args.map((f) => f(s));
    const kw: Record<string, Value> = {};
    for (const [k, f] of kwargs) kw[k] = f(s);
    let r: Value | Missing;
    try {
      const bound = bindArgs(spec, a, kw);
      if (!(v instanceof Missing)) r = spec.fn(v, bound, kw);
      else if (onMissing) r = onMissing(bound);
      else throw undefinedError(v, text);
    } catch (e) {
      throw rethrow(e, text);
    }
    if (!(r instanceof Missing)) return r;
    return mode.miss(new Missing(text, '', r.reason), text);
  };
}

/** Compile-time checks of a filter call's arguments against the filter's parameters. */
function checkFilterArgs(c: CompileCtx, n: Extract<Node, { kind: 'filter' }>, spec: FilterSpec): void {
  let bound: Arg[] = [];
  try {
    bound = bindArgs(
      spec,
      n.args.map(() => null),
      Object.fromEntries(n.kwargs.map((k) => [k.name, null])),
    );
  } catch (e) {
    c.fail(`filter '${n.name}': ${errorMessage(e)}`, n.nameAt);
  }
  if (!spec.variadic && bound.slice(0, spec.required).includes(undefined)) {
    c.fail(
      `filter '${n.name}' needs ${spec.required} argument(s): ${spec.params.slice(0, spec.required).join(', ')}`,
      n.nameAt,
    );
  }
  if (n.name === 'map' && n.args[0]?.kind === 'const' && typeof n.args[0].value === 'string') {
    const inner = n.args[0].value;
    if (!FILTERS[inner] || FILTERS[inner].variadic)
      c.fail(`unknown filter '${inner}' in map()`, n.args[0].start);
  }
}

export function buildTest(c: CompileCtx, n: Extract<Node, { kind: 'test' }>, text: string): Ev {
  const spec = TESTS[n.name];
  if (!spec) {
    const hint = didYouMean(n.name, Object.keys(TESTS));
    c.fail(`unknown test '${n.name}'${hint ? `; ${hint}` : ''}`, n.nameAt);
  }
  if (n.kwargs.length) c.fail(`test '${n.name}' takes no keyword arguments`, n.kwargs[0].at);
  if (n.args.length < spec.min || n.args.length > spec.max) {
    c.fail(`test '${n.name}' takes ${spec.max} argument(s), got ${n.args.length}`, n.nameAt);
  }
  const input = c.build(n.obj, PROBE);
  const args = n.args.map((a) => c.strict(a));
  const negated = n.negated;
  return (s) => {
    const v = input(s);
    let r: boolean;
    if (v instanceof Missing) {
      if (spec.onUndefined === 'error') throw undefinedError(v, text);
      r = spec.onUndefined;
    } else {
      const a = args.map((f) => f(s));
      try {
        r = spec.fn(v, a);
      } catch (e) {
        throw rethrow(e, text);
      }
    }
    return negated ? !r : r;
  };
}
