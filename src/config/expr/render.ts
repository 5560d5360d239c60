/**
 * Python `str()` / `repr()` of values (spec config.md 3.6) and conversion to plain JS.
 */
import { capped, tick } from './meter.js';
import { DomainValue, Missing, PyFloat, cleanRead, isTuple, type Value } from './values.js';

/** Python `str(int)`; integers beyond 2^53 print all their digits like Python would. */
export function intStr(n: number): string {
  if (Number.isSafeInteger(n)) return String(n);
  return BigInt(n).toString();
}

/** Python `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, expPart] = Math.abs(x).toExponential().split('e');
  const exp = Number(expPart);
  const digits = mant.replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp);
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
}

const PLAIN_ASCII = /^[\x20-\x7e]*$/;
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Python `repr(str)`. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  if (PLAIN_ASCII.test(s) && !s.includes('\\') && !s.includes(quote)) return quote + s + quote;
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + hex(c, 2);
    else if (c < 0x7f) out += ch;
    else if (NON_PRINTABLE.test(ch)) {
      out += c <= 0xff ? '\\x' + hex(c, 2) : c <= 0xffff ? '\\u' + hex(c, 4) : '\\U' + hex(c, 8);
    } else out += ch;
  }
  return out + quote;
}

/** `acc.n`: characters built so far by this repr, checked against the size cap as it grows */
function repr(v: Value, path: object[], acc: { n: number }): string {
  while (v instanceof DomainValue) v = v.value;
  tick();
  if (v === null) return 'None';
  switch (typeof v) {
    case 'boolean':
      return v ? 'True' : 'False';
    case 'number':
      return Number.isInteger(v) ? intStr(v) : floatRepr(v);
    case 'string':
      acc.n += v.length;
      capped(acc.n);
      return strRepr(v);
    case 'object':
      break;
    default:
      return 'None';
  }
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (v instanceof Missing) return 'Undefined';
  if (path.includes(v)) return Array.isArray(v) ? (isTuple(v) ? '(...)' : '[...]') : '{...}';
  if (path.length > 500) return '...';
  path.push(v);
  let out: string;
  if (Array.isArray(v)) {
    acc.n += 2 * v.length + 2;
    capped(acc.n);
    const items = v.map((x) => repr(cleanRead(x) ?? null, path, acc));
    out = isTuple(v) ? `(${items.join(', ')}${items.length === 1 ? ',' : ''})` : `[${items.join(', ')}]`;
  } else {
    const parts: string[] = [];
    for (const k of Object.keys(v)) {
      const x = cleanRead(v[k]);
      acc.n += k.length + 6;
      capped(acc.n);
      if (x !== undefined) parts.push(`${strRepr(k)}: ${repr(x, path, acc)}`);
    }
    out = `{${parts.join(', ')}}`;
  }
  path.pop();
  return out;
}

/** Python `repr()` of a value (strings quoted). */
export function reprValue(v: Value): string {
  return repr(v, [], { n: 0 });
}

/** Python `str()` of a value: strings as-is, everything else as `repr`. */
export function renderValue(v: Value): string {
  while (v instanceof DomainValue) v = v.value;
  return typeof v === 'string' ? v : repr(v, [], { n: 0 });
}

/** plain JS data, what toNative unwraps a value to (a Jinja2 undefined becomes undefined) */
export type NativeValue =
  null | boolean | number | string | undefined | NativeValue[] | { [k: string]: NativeValue };

/** Unwraps PyFloat/DomainValue recursively into plain JS data (tuples become arrays). */
export function toNative(v: Value): NativeValue {
  return native(v, 0);
}

function native(v: Value, depth: number): NativeValue {
  while (v instanceof DomainValue) v = v.value;
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof PyFloat) return v.value;
  if (v instanceof Missing) return undefined;
  if (depth > 1000) throw new RangeError('value nested too deeply');
  if (Array.isArray(v)) return v.map((x) => native(cleanRead(x) ?? null, depth + 1));
  const out: { [k: string]: NativeValue } = {};
  for (const k of Object.keys(v)) {
    const x = cleanRead(v[k]);
    if (x === undefined) continue;
    const n = native(x, depth + 1);
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: n, enumerable: true, writable: true, configurable: true });
    else out[k] = n;
  }
  return out;
}
