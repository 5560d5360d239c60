/**
 * Python built-ins the filters need: int()/float() parsing, round(), str.strip/replace, and
 * json.dumps as used by Jinja2's `tojson` (sorted keys, ASCII-only, HTML-safe).
 */
import { OpError } from './errors.js';
import { capped, sized, tick } from './meter.js';
import { floatRepr, intStr } from './render.js';
import {
  DomainValue,
  PY_WS,
  PyFloat,
  type Value,
  cleanRead,
  compareStr,
  isDict,
  strChars,
} from './values.js';

const WS_START = new RegExp(`^[${PY_WS}]+`);
const WS_END = new RegExp(`[${PY_WS}]+$`);

/** Python `str.strip(chars)`. */
export function pyStrip(s: string, chars?: string): string {
  if (chars === undefined) return s.replace(WS_START, '').replace(WS_END, '');
  const set = new Set(strChars(chars));
  const cs = strChars(s);
  let a = 0;
  let b = cs.length;
  while (a < b && set.has(cs[a])) a++;
  while (b > a && set.has(cs[b - 1])) b--;
  return cs.slice(a, b).join('');
}

/** Python `str.replace(old, new, count)`; count < 0 means all. */
export function pyReplace(s: string, old: string, rep: string, count: number): string {
  if (count === 0) return s;
  if (old === '') {
    const cs = strChars(s);
    sized(s.length + (count < 0 ? cs.length + 1 : Math.min(count, cs.length + 1)) * rep.length);
    let out = '';
    let n = 0;
    for (let i = 0; i <= cs.length; i++) {
      if (count < 0 || n < count) {
        out += rep;
        n++;
      }
      if (i < cs.length) out += cs[i];
    }
    return out;
  }
  const pieces = s.split(old);
  const hits = count < 0 ? pieces.length - 1 : Math.min(count, pieces.length - 1);
  sized(s.length + hits * (rep.length - old.length));
  if (count < 0 || count >= pieces.length - 1) return pieces.join(rep);
  return pieces.slice(0, count + 1).join(rep) + old + pieces.slice(count + 1).join(old);
}

const DIGITS: Record<number, RegExp> = {
  2: /^[01](?:_?[01])*$/i,
  8: /^[0-7](?:_?[0-7])*$/i,
  10: /^\d(?:_?\d)*$/,
  16: /^[\da-f](?:_?[\da-f])*$/i,
};

/** Python `int(str, base)` for bases 0, 2, 8, 10, 16; null when Python raises ValueError. */
export function parsePyInt(text: string, base: number): number | null {
  let s = pyStrip(text);
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  const prefix = s.slice(0, 2).toLowerCase();
  const prefBase = prefix === '0x' ? 16 : prefix === '0o' ? 8 : prefix === '0b' ? 2 : 0;
  if (base === 0) {
    if (prefBase) s = s.slice(2).replace(/^_/, '');
    else if (/^0+(?:_?0)*$/.test(s)) return 0;
    else if (s.startsWith('0')) return null;
    base = prefBase || 10;
  } else if (prefBase && prefBase === base) {
    s = s.slice(2).replace(/^_/, '');
  }
  const re = DIGITS[base];
  if (!re) throw new OpError(`int() base ${base} is not supported`);
  if (!re.test(s)) return null;
  const n = base === 10 ? Number(s.replace(/_/g, '')) : parseInt(s.replace(/_/g, ''), base);
  if (!Number.isSafeInteger(n))
    throw new OpError(
      `integer ${text.trim()} is beyond ±2^53 (9007199254740991), where sflow cannot compute exactly`,
    );
  return sign * n || 0;
}

const FLOAT_RE = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:e[+-]?\d(?:_?\d)*)?$/i;

/** Python `float(str)`; null when Python raises ValueError. */
export function parsePyFloat(text: string): number | null {
  const s = pyStrip(text);
  const l = s.toLowerCase().replace(/^[+-]/, '');
  if (l === 'inf' || l === 'infinity') return s.startsWith('-') ? -Infinity : Infinity;
  if (l === 'nan') return NaN;
  if (!FLOAT_RE.test(s)) return null;
  return Number(s.replace(/_/g, ''));
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Python `round(int, ndigits)` (ndigits may be negative). */
export function roundInt(x: number, ndigits: number): number {
  if (ndigits >= 0) return x;
  const p = 10 ** -ndigits;
  const r = roundHalfEven(x / p) * p;
  return r === 0 ? 0 : r;
}

const f64 = new DataView(new ArrayBuffer(8));

/**
 * The exact decimal expansion of a finite non-negative double: all its digits and the position
 * of the decimal point within them (at least one integer digit).
 */
export function exactDigits(ax: number): { digits: string; point: number } {
  f64.setFloat64(0, ax);
  const hi = f64.getUint32(0);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(f64.getUint32(4));
  let e = -1074;
  if (bexp !== 0) {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  if (e >= 0) {
    const s = (mant << BigInt(e)).toString();
    return { digits: s, point: s.length };
  }
  const s = (mant * 5n ** BigInt(-e)).toString().padStart(-e + 1, '0');
  return { digits: s, point: s.length + e };
}

/** Keeps the first `keep` digits, rounding half to even on the rest; the result may gain a digit. */
export function roundDigits(digits: string, keep: number): string {
  if (keep < 0) return '';
  const kept = digits.slice(0, keep);
  const next = digits[keep] ?? '0';
  const last = Number(kept[kept.length - 1] ?? '0');
  const up = next > '5' || (next === '5' && (/[1-9]/.test(digits.slice(keep + 1)) || last % 2 === 1));
  if (!up) return kept;
  return (BigInt(kept || '0') + 1n).toString().padStart(kept.length, '0');
}

/** Python `round(float, ndigits)`: correctly rounded, ties to even, on the exact binary value. */
export function roundFloat(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const neg = x < 0;
  const { digits, point } = exactDigits(Math.abs(x));
  const keep = point + ndigits;
  if (keep >= digits.length) return x;
  const r = keep < 0 ? '' : roundDigits(digits, keep);
  const v = r === '' ? 0 : Number(`${r}e${-ndigits}`);
  return neg ? -v : v;
}

// ---- tojson ----

function jsonStr(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e || ch === '<' || ch === '>' || ch === '&' || ch === "'") {
      out += '\\u' + c.toString(16).padStart(4, '0');
    } else out += ch;
  }
  return out + '"';
}

/** Jinja2 `tojson`: `json.dumps(v, sort_keys=True, indent=indent)` made HTML-safe. */
export function toJson(v: Value, indent: number | null, level = 0, acc = { n: 0 }): string {
  if (level > 500) throw new OpError('value nested too deeply for tojson');
  tick();
  while (v instanceof DomainValue) v = v.value;
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') {
    acc.n += v.length;
    capped(acc.n);
    return jsonStr(v);
  }
  if (typeof v === 'number' || v instanceof PyFloat) {
    const x = typeof v === 'number' ? v : v.value;
    if (Number.isNaN(x)) return 'NaN';
    if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
    return typeof v === 'number' && Number.isInteger(v) ? intStr(v) : floatRepr(x);
  }
  if (indent !== null) capped(indent * (level + 1));
  const nl = indent === null ? '' : '\n' + ' '.repeat(indent * (level + 1));
  const close = indent === null ? '' : '\n' + ' '.repeat(indent * level);
  const sep = indent === null ? ', ' : ',';
  let items: string[];
  let open: string;
  let end: string;
  if (Array.isArray(v)) {
    items = v.map((x) => toJson(cleanRead(x) ?? null, indent, level + 1, acc));
    [open, end] = ['[', ']'];
  } else if (isDict(v)) {
    const keys = Object.keys(v)
      .filter((k) => cleanRead(v[k]) !== undefined)
      .sort(compareStr);
    items = keys.map((k) => `${jsonStr(k)}: ${toJson(cleanRead(v[k])!, indent, level + 1, acc)}`);
    [open, end] = ['{', '}'];
  } else return 'null';
  if (items.length === 0) return open + end;
  acc.n += items.length * (sep.length + nl.length) + 2;
  capped(acc.n);
  return open + nl + items.join(sep + nl) + close + end;
}
