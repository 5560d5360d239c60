/**
 * The value model of the `${{ }}` language: plain JSON-like data with Python typing.
 *
 * - A JS number that is an integer is a Python `int`; a non-integer number (incl. NaN/±Infinity)
 *   is a Python `float`; `PyFloat` marks a float whose value happens to be integral (`2.0`).
 * - Arrays are Python lists, except arrays registered as tuples (`(1, 2)` literals, see `makeTuple`).
 * - Objects are dicts with string keys (own enumerable properties only).
 * - `DomainValue` is a variable that also carries its declared domain (`variables.C.domain`).
 */

export type Value =
  null | boolean | number | string | PyFloat | DomainValue | Value[] | { [k: string]: Value };

export type Scope = { [name: string]: Value };

/** The characters Python's `str.isspace()` and `re`'s `\s` take for whitespace, as a regex class body */
export const PY_WS =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** A Python float whose value is integral (or that must render as a float, e.g. `2.0`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A variable: behaves as `value` everywhere except for the attribute `.domain`. */
export class DomainValue {
  constructor(
    readonly value: Value,
    readonly domain: Value[] | null,
  ) {}
}

/**
 * Internal marker for "undefined" (Jinja2's Undefined): produced by failed lookups and by an
 * `x if c` without `else`; never escapes the evaluator. `expr`/`name` describe the failure.
 */
export class Missing {
  constructor(
    readonly expr: string,
    readonly name: string,
    readonly reason?: string,
  ) {}
}

/** The object itself, with no prototype: a lookup table where `constructor` & co. are not entries. */
export function withoutPrototype<T extends object>(o: T): T {
  Object.setPrototypeOf(o, null);
  return o;
}

const tuples = new WeakSet<object>();

/** Marks a freshly built array as a Python tuple (renders `(1, 2)`, `(1,)`). */
export function makeTuple(items: Value[]): Value[] {
  tuples.add(items);
  return items;
}

export function isTuple(v: unknown): boolean {
  return Array.isArray(v) && tuples.has(v);
}

export function unwrap(v: Value): Value {
  while (v instanceof DomainValue) v = v.value;
  return v;
}

export function isDict(v: unknown): v is { [k: string]: Value } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof PyFloat) &&
    !(v instanceof DomainValue) &&
    !(v instanceof Missing)
  );
}

/** Python-level kind of an (unwrapped) value. */
export type Kind = 'none' | 'bool' | 'int' | 'float' | 'str' | 'list' | 'tuple' | 'dict';

export function kindOf(v: Value): Kind {
  v = unwrap(v);
  if (v === null) return 'none';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int' : 'float';
    case 'string':
      return 'str';
  }
  if (v instanceof PyFloat) return 'float';
  if (Array.isArray(v)) return tuples.has(v) ? 'tuple' : 'list';
  return 'dict';
}

/** Python type name used in error messages. */
export function typeName(v: Value): string {
  const k = kindOf(v);
  return k === 'none' ? 'NoneType' : k;
}

export function isNumeric(v: Value): boolean {
  const k = kindOf(v);
  return k === 'int' || k === 'float' || k === 'bool';
}

/** Integer-like (Python int, including bool). */
export function isIntLike(v: Value): boolean {
  const k = kindOf(v);
  return k === 'int' || k === 'bool';
}

/** Numeric JS value of a number-like Value (bool → 0/1). Caller checks `isNumeric` first. */
export function num(v: Value): number {
  v = unwrap(v);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof PyFloat) return v.value;
  return NaN;
}

/** A float result: integral values are wrapped so they keep rendering as floats. */
export function mkFloat(x: number): Value {
  return Number.isInteger(x) ? new PyFloat(x) : x;
}

/** Attribute names that never resolve, whatever the data holds (JS and Python internals). */
export function isBlockedName(name: string): boolean {
  return (
    name === 'constructor' ||
    name === 'prototype' ||
    name === '__proto__' ||
    (name.length > 4 && name.startsWith('__') && name.endsWith('__'))
  );
}

/**
 * Sanitises a value read from a container: only data survives; functions, symbols and JS
 * `undefined` are treated as missing, bigints become numbers.
 */
export function cleanRead(v: unknown): Value | undefined {
  switch (typeof v) {
    case 'function':
    case 'symbol':
    case 'undefined':
      return undefined;
    case 'bigint':
      return Number(v);
    default:
      return v as Value;
  }
}

/** Own enumerable keys of a dict whose values are data. */
export function dictKeys(d: { [k: string]: Value }): string[] {
  return Object.keys(d).filter((k) => cleanRead(d[k]) !== undefined);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Python `len()` of a string: counts code points. */
export function strLen(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The code points of a string (as strings), fast path for BMP-only strings. */
export function strChars(s: string): string[] {
  return SURROGATE.test(s) ? Array.from(s) : s.split('');
}

/** Python string comparison (by code point). */
export function compareStr(a: string, b: string): number {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = Array.from(a);
  const y = Array.from(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const c = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (c !== 0) return c < 0 ? -1 : 1;
  }
  return x.length - y.length < 0 ? -1 : x.length === y.length ? 0 : 1;
}
