/** Helpers shared by the filters: Python iteration, attribute getters, conversions. */
import { OpError, floatToIntError } from './errors.js';
import { tick } from './meter.js';
import { NOT_FOUND, getItem } from './lookup.js';
import { truthy } from './ops.js';
import { parsePyFloat, parsePyInt } from './pyconv.js';
import { renderValue } from './render.js';
import {
  Missing,
  type Value,
  dictKeys,
  isDict,
  isIntLike,
  isNumeric,
  num,
  strChars,
  strLen,
  typeName,
  unwrap,
} from './values.js';

/** A filter argument; undefined when not given. */
export type Arg = Value | undefined;

/** A given (not omitted) argument. */
export const isGiven = (a: Arg): a is Value => a !== undefined;

/** A required argument's value; `bindArgs` and the compile-time check make it present. */
export function given(a: Arg, name: string): Value {
  if (a === undefined) throw new OpError(`missing required argument '${name}'`);
  return a;
}

/** A filter result meaning "undefined" (e.g. `[] | first`). */
export const missing = (reason: string): Missing => new Missing('', '', reason);

/** Python iteration: str → characters, list/tuple → items, dict → keys. */
export function iterate(v: Value): Value[] {
  v = unwrap(v);
  if (typeof v === 'string') {
    tick(v.length);
    return strChars(v);
  }
  if (Array.isArray(v)) {
    tick(v.length);
    return v;
  }
  if (isDict(v)) return dictKeys(v);
  throw new OpError(`'${typeName(v)}' object is not iterable`);
}

/** Jinja2 `make_attrgetter`: dotted path, numeric parts index lists. */
export function attrGetter(attribute: Arg, dflt?: Arg): (x: Value) => Value {
  if (attribute === undefined || attribute === null) return (x) => x;
  const parts = String(unwrap(attribute))
    .split('.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return (x) => {
    let cur: Value = x;
    for (const p of parts) {
      const r = getItem(cur, p);
      if (r === NOT_FOUND) {
        if (dflt !== undefined) return dflt;
        throw new OpError(`${typeName(cur)} object has no attribute '${p}'`);
      }
      cur = r;
    }
    return cur;
  };
}

export function keyFn(caseSensitive: Arg, attribute: Arg): (x: Value) => Value {
  const get = attrGetter(attribute);
  if (caseSensitive !== undefined && truthy(caseSensitive)) return get;
  return (x) => {
    const v = unwrap(get(x));
    return typeof v === 'string' ? v.toLowerCase() : v;
  };
}

export function toStr(v: Value): string {
  return renderValue(v);
}

export function intArg(v: Arg, name: string, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  if (!isIntLike(v)) throw new OpError(`'${name}' must be an integer, got ${typeName(v)}`);
  return num(v);
}

export function pyInt(v: Value, dflt: Arg, base: number): Value {
  v = unwrap(v);
  const fallback = dflt === undefined ? 0 : dflt;
  if (typeof v === 'string') {
    // Jinja2 falls back to int(float(v)) and answers the default for whatever that raises,
    // OverflowError included: 'inf', 'nan' and '1e400' give the default
    const n = parsePyInt(v, base) ?? parsePyFloat(v);
    if (n === null || !Number.isFinite(n)) return fallback;
    return Math.trunc(n) || 0;
  }
  if (isNumeric(v)) {
    const n = num(v);
    // int(nan) raises ValueError, which Jinja2 turns into the default; int(inf) raises
    // OverflowError, which it lets through
    if (Number.isNaN(n)) return fallback;
    if (!Number.isFinite(n)) throw floatToIntError(n);
    return Math.trunc(n) || 0;
  }
  return fallback;
}

/** Python `len()`. */
export function length(v: Value): number {
  v = unwrap(v);
  if (typeof v === 'string') return strLen(v);
  if (Array.isArray(v)) return v.length;
  if (isDict(v)) return dictKeys(v).length;
  throw new OpError(`object of type '${typeName(v)}' has no len()`);
}
