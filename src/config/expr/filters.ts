/**
 * The filter table (`x | name(args)`), with Jinja2's semantics. Required by recipes: max, min,
 * join, map, length/count, list. Also: default/d, int, float, string, lower, upper, first, last,
 * sum, abs, round, replace, trim, sort, unique, tojson. Anything else is an unknown filter.
 */
import { OpError, floatToIntError } from './errors.js';
import { capped, sized } from './meter.js';
import {
  type Arg,
  attrGetter,
  given,
  isGiven,
  intArg,
  iterate,
  keyFn,
  length,
  missing,
  pyInt,
  toStr,
} from './filter-util.js';
import { add, compare, eq, mkInt, truthy } from './ops.js';
import { percentFormat } from './pyformat.js';
import { parsePyFloat, pyReplace, pyStrip, roundFloat, roundInt, toJson } from './pyconv.js';
import { renderValue } from './render.js';
import {
  Missing,
  type Value,
  isNumeric,
  kindOf,
  makeTuple,
  mkFloat,
  num,
  typeName,
  unwrap,
  withoutPrototype,
} from './values.js';

export type { Arg } from './filter-util.js';
export { iterate } from './filter-util.js';
export type Result = Value | Missing;

export interface FilterSpec {
  /** parameter names in positional order (also the accepted keyword names) */
  params: string[];
  /** how many leading params are required */
  required: number;
  /** the result for an undefined input; without it an undefined input is an error (only `default` has one) */
  onMissing?: (args: Arg[]) => Result;
  /** positional args / kwargs are passed through unchecked (only `map`) */
  variadic?: boolean;
  fn: (v: Value, args: Arg[], kwargs: Record<string, Value>) => Result;
}

/** Python `round(x)` (no ndigits, or None): the nearest integer, ties to even */
function roundToInt(x: number): number {
  if (!Number.isFinite(x)) throw floatToIntError(x);
  return mkInt(roundFloat(x, 0));
}

function extreme(sign: 1 | -1): FilterSpec {
  return {
    params: ['case_sensitive', 'attribute'],
    required: 0,
    fn: (v, [cs, attr]) => {
      const items = iterate(v);
      if (!items.length) return missing('No aggregated item, sequence was empty.');
      const key = keyFn(cs, attr);
      let best = items[0];
      let bestKey = key(best);
      for (const x of items.slice(1)) {
        const k = key(x);
        if (compare(k, bestKey, sign > 0 ? '>' : '<') * sign > 0) [best, bestKey] = [x, k];
      }
      return best;
    },
  };
}

export const FILTERS: Record<string, FilterSpec> = withoutPrototype({
  abs: {
    params: [],
    required: 0,
    fn: (v) => {
      if (!isNumeric(v)) throw new OpError(`bad operand type for abs(): '${typeName(v)}'`);
      return kindOf(v) === 'float' ? mkFloat(Math.abs(num(v))) : Math.abs(num(v));
    },
  },
  default: {
    params: ['default_value', 'boolean'],
    required: 0,
    onMissing: ([dflt]) => (dflt === undefined ? '' : dflt),
    fn: (v, [dflt, boolean]) => {
      const useDefault = boolean !== undefined && truthy(boolean) && !truthy(v);
      return useDefault ? (dflt === undefined ? '' : dflt) : v;
    },
  },
  first: {
    params: [],
    required: 0,
    fn: (v) => {
      const items = iterate(v);
      return items.length ? items[0] : missing('No first item, sequence was empty.');
    },
  },
  last: {
    params: [],
    required: 0,
    fn: (v) => {
      const items = iterate(v);
      return items.length ? items[items.length - 1] : missing('No last item, sequence was empty.');
    },
  },
  float: {
    params: ['default'],
    required: 0,
    fn: (v, [dflt]) => {
      const u = unwrap(v);
      const n = typeof u === 'string' ? parsePyFloat(u) : isNumeric(u) ? num(u) : null;
      return n === null ? (dflt === undefined ? mkFloat(0) : dflt) : mkFloat(n);
    },
  },
  int: {
    params: ['default', 'base'],
    required: 0,
    fn: (v, [dflt, base]) => pyInt(v, dflt, intArg(base, 'base', 10)),
  },
  format: {
    params: [],
    required: 0,
    variadic: true,
    fn: (v, args, kwargs) => {
      const hasKw = Object.keys(kwargs).length > 0;
      if (args.length && hasKw)
        throw new OpError("can't handle positional and keyword arguments at the same time");
      return percentFormat(toStr(v), hasKw ? kwargs : makeTuple(args.filter(isGiven)));
    },
  },
  join: {
    params: ['d', 'attribute'],
    required: 0,
    fn: (v, [d, attr]) => {
      const get = attrGetter(attr);
      const sep = d === undefined ? '' : toStr(d);
      let total = 0;
      const parts = iterate(v).map((x) => {
        const s = toStr(get(x));
        total += s.length + sep.length;
        capped(total);
        return s;
      });
      sized(total);
      return parts.join(sep);
    },
  },
  length: { params: [], required: 0, fn: (v) => length(v) },
  list: { params: [], required: 0, fn: (v) => iterate(v).slice() },
  lower: { params: [], required: 0, fn: (v) => toStr(v).toLowerCase() },
  upper: { params: [], required: 0, fn: (v) => toStr(v).toUpperCase() },
  map: {
    params: [],
    required: 0,
    variadic: true,
    fn: (v, args, kwargs) => {
      const items = truthy(v) ? iterate(v) : []; // Jinja2: `if value:`
      if (Object.hasOwn(kwargs, 'attribute')) {
        const extra = Object.keys(kwargs).filter((k) => k !== 'attribute' && k !== 'default');
        if (extra.length || args.length)
          throw new OpError(`unexpected argument to map(attribute=…): ${extra[0] ?? 'positional'}`);
        const get = attrGetter(
          kwargs.attribute,
          Object.hasOwn(kwargs, 'default') ? kwargs.default : undefined,
        );
        return items.map(get);
      }
      if (!args.length) throw new OpError('map requires a filter name or attribute=');
      const name = unwrap(given(args[0], 'name'));
      const spec = typeof name === 'string' ? FILTERS[name] : undefined;
      if (!spec || spec.variadic) throw new OpError(`map: unknown filter ${renderValue(name)}`);
      const rest = args.slice(1);
      return items.map((x) => {
        const r = spec.fn(x, bindArgs(spec, rest, kwargs), kwargs);
        if (r instanceof Missing) throw new OpError(r.reason ?? 'undefined result');
        return r;
      });
    },
  },
  max: extreme(1),
  min: extreme(-1),
  replace: {
    params: ['old', 'new', 'count'],
    required: 2,
    fn: (v, [old, rep, count]) =>
      pyReplace(toStr(v), toStr(given(old, 'old')), toStr(given(rep, 'new')), intArg(count, 'count', -1)),
  },
  round: {
    params: ['precision', 'method'],
    required: 0,
    fn: (v, [precision, method]) => {
      const m = method === undefined ? 'common' : unwrap(method);
      if (m !== 'common' && m !== 'ceil' && m !== 'floor')
        throw new OpError('method must be common, ceil or floor');
      const u = unwrap(v);
      if (!isNumeric(u)) throw new OpError(`type ${typeName(u)} doesn't define __round__ method`);
      // Python's round(x, None) is round(x): an integer
      if (precision !== undefined && unwrap(precision) === null) {
        if (m === 'common') return roundToInt(num(u));
        throw new OpError(`'precision' must be an integer with method ${m}, got NoneType`);
      }
      const p = intArg(precision, 'precision', 0);
      if (m !== 'common') {
        const scale = 10 ** p;
        return mkFloat((m === 'ceil' ? Math.ceil : Math.floor)(num(u) * scale) / scale);
      }
      if (kindOf(u) === 'float') return mkFloat(roundFloat(num(u), p));
      return roundInt(num(u), p);
    },
  },
  sort: {
    params: ['reverse', 'case_sensitive', 'attribute'],
    required: 0,
    fn: (v, [reverse, cs, attr]) => {
      const key = keyFn(cs, attr);
      const keyed = iterate(v).map((x) => [key(x), x] as const);
      const rev = reverse !== undefined && truthy(reverse);
      keyed.sort((a, b) => (rev ? compare(b[0], a[0], '<') : compare(a[0], b[0], '<')) || 0);
      return keyed.map((p) => p[1]);
    },
  },
  string: { params: [], required: 0, fn: (v) => toStr(v) },
  sum: {
    params: ['attribute', 'start'],
    required: 0,
    fn: (v, [attr, start]) => {
      const get = attrGetter(attr);
      return iterate(v).reduce<Value>((acc, x) => add(acc, get(x)), start === undefined ? 0 : start);
    },
  },
  tojson: {
    params: ['indent'],
    required: 0,
    fn: (v, [indent]) =>
      toJson(v, indent === undefined || indent === null ? null : intArg(indent, 'indent', 0)),
  },
  trim: {
    params: ['chars'],
    required: 0,
    fn: (v, [chars]) => {
      const c = chars === undefined ? null : unwrap(chars);
      if (c !== null && typeof c !== 'string') throw new OpError('strip arg must be None or str');
      return pyStrip(toStr(v), c ?? undefined);
    },
  },
  unique: {
    params: ['case_sensitive', 'attribute'],
    required: 0,
    fn: (v, [cs, attr]) => {
      const key = keyFn(cs, attr);
      const seen: Value[] = [];
      const out: Value[] = [];
      for (const x of iterate(v)) {
        const k = key(x);
        const kk = kindOf(k);
        if (kk === 'list' || kk === 'dict') throw new OpError(`unhashable type: '${kk}'`);
        if (!seen.some((s) => eq(s, k))) {
          seen.push(k);
          out.push(x);
        }
      }
      return out;
    },
  },
} satisfies Record<string, FilterSpec>);
FILTERS.d = FILTERS.default;
FILTERS.count = FILTERS.length;

/** Aligns positional and keyword arguments with a filter's parameter list. */
export function bindArgs(spec: FilterSpec, args: Arg[], kwargs: Record<string, Value>): Arg[] {
  if (spec.variadic) return args;
  if (args.length > spec.params.length)
    throw new OpError(`too many arguments (at most ${spec.params.length})`);
  const out = spec.params.map((_, i) => args[i]);
  for (const [k, val] of Object.entries(kwargs)) {
    const i = spec.params.indexOf(k);
    if (i < 0) throw new OpError(`unexpected keyword argument '${k}'`);
    if (i < args.length) throw new OpError(`got multiple values for argument '${k}'`);
    out[i] = val;
  }
  return out;
}
