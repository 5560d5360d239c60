/**
 * Python semantics of the operators: arithmetic, comparison, membership, truthiness.
 * Failures throw `OpError` with Python's TypeError/ZeroDivisionError wording.
 */
import { OpError } from './errors.js';
import { sized, tick } from './meter.js';
import { percentFormat } from './pyformat.js';
import {
  PyFloat,
  type Value,
  cleanRead,
  compareStr,
  dictKeys,
  isDict,
  isIntLike,
  isNumeric,
  isTuple,
  kindOf,
  makeTuple,
  mkFloat,
  num,
  typeName,
  unwrap,
} from './values.js';

/**
 * An integer result. Integers are JS numbers, exact up to 2^53; beyond, Python would still be
 * exact and a double is not, so it is an error rather than a silently rounded value.
 */
export function mkInt(x: number): number {
  if (!Number.isSafeInteger(x)) {
    throw new OpError(
      Number.isFinite(x)
        ? 'integer result beyond ±2^53 (9007199254740991) cannot be computed exactly'
        : 'integer result too large',
    );
  }
  return x === 0 ? 0 : x;
}

function isFloatOperand(a: Value, b: Value): boolean {
  return kindOf(a) === 'float' || kindOf(b) === 'float';
}

function unsupported(op: string, a: Value, b: Value): OpError {
  return new OpError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

export function add(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (isNumeric(a) && isNumeric(b)) {
    const r = num(a) + num(b);
    return isFloatOperand(a, b) ? mkFloat(r) : mkInt(r);
  }
  if (typeof a === 'string') {
    if (typeof b !== 'string') throw new OpError(`can only concatenate str (not "${typeName(b)}") to str`);
    sized(a.length + b.length);
    return a + b;
  }
  if (Array.isArray(a)) {
    const ka = kindOf(a);
    if (!Array.isArray(b) || kindOf(b) !== ka)
      throw new OpError(`can only concatenate ${ka} (not "${typeName(b)}") to ${ka}`);
    sized(a.length + b.length);
    const r = a.concat(b);
    return ka === 'tuple' ? makeTuple(r) : r;
  }
  throw unsupported('+', a, b);
}

export function sub(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (!isNumeric(a) || !isNumeric(b)) throw unsupported('-', a, b);
  const r = num(a) - num(b);
  return isFloatOperand(a, b) ? mkFloat(r) : mkInt(r);
}

/** A Python sequence (str, list, tuple) of an unwrapped value. */
function isSeq(v: Value): v is string | Value[] {
  return typeof v === 'string' || Array.isArray(v);
}

function repeat(seq: string | Value[], n: number): Value {
  const count = Math.max(0, n);
  if (typeof seq === 'string') {
    sized(seq.length * count);
    return seq.repeat(count);
  }
  sized(seq.length * count);
  const out: Value[] = [];
  for (let i = 0; i < count; i++) for (const x of seq) out.push(x);
  return isTuple(seq) ? makeTuple(out) : out;
}

export function mul(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (isNumeric(a) && isNumeric(b)) {
    const r = num(a) * num(b);
    return isFloatOperand(a, b) ? mkFloat(r) : mkInt(r);
  }
  const pair = isSeq(a) ? { seq: a, n: b } : isSeq(b) ? { seq: b, n: a } : undefined;
  if (!pair) throw unsupported('*', a, b);
  if (!isIntLike(pair.n))
    throw new OpError(`can't multiply sequence by non-int of type '${typeName(pair.n)}'`);
  return repeat(pair.seq, num(pair.n));
}

export function truediv(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (!isNumeric(a) || !isNumeric(b)) throw unsupported('/', a, b);
  if (num(b) === 0) throw new OpError('division by zero');
  return mkFloat(num(a) / num(b));
}

/** Python's float divmod algorithm (also exact for safe integers). */
function divmod(x: number, y: number): [number, number] {
  let mod = x % y;
  let div = (x - mod) / y;
  if (mod !== 0) {
    if (y < 0 !== mod < 0) {
      mod += y;
      div -= 1;
    }
  } else {
    mod = y < 0 ? -0 : 0;
  }
  let floordiv: number;
  if (div !== 0) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else {
    const q = x / y;
    floordiv = q < 0 || Object.is(q, -0) ? -0 : 0;
  }
  return [floordiv, mod];
}

export function floordiv(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (!isNumeric(a) || !isNumeric(b)) throw unsupported('//', a, b);
  const f = isFloatOperand(a, b);
  if (num(b) === 0)
    throw new OpError(f ? 'float floor division by zero' : 'integer division or modulo by zero');
  const [d] = divmod(num(a), num(b));
  return f ? mkFloat(d) : mkInt(d);
}

export function mod(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (typeof a === 'string') return percentFormat(a, b);
  if (!isNumeric(a) || !isNumeric(b)) throw unsupported('%', a, b);
  const f = isFloatOperand(a, b);
  if (num(b) === 0) throw new OpError(f ? 'float modulo' : 'integer division or modulo by zero');
  const [, m] = divmod(num(a), num(b));
  return f ? mkFloat(m) : mkInt(m);
}

export function pow(a: Value, b: Value): Value {
  a = unwrap(a);
  b = unwrap(b);
  if (!isNumeric(a) || !isNumeric(b)) throw unsupported('** or pow()', a, b);
  const x = num(a);
  const y = num(b);
  if (x === 0 && y < 0) throw new OpError('0.0 cannot be raised to a negative power');
  if (!isFloatOperand(a, b) && y >= 0) return mkInt(x ** y);
  if (x < 0 && !Number.isInteger(y) && Number.isFinite(y)) {
    throw new OpError(
      'a negative number raised to a fractional power gives a complex number (not supported)',
    );
  }
  const r = x ** y;
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y))
    throw new OpError('numerical result out of range');
  return mkFloat(r);
}

export function neg(a: Value): Value {
  a = unwrap(a);
  if (!isNumeric(a)) throw new OpError(`bad operand type for unary -: '${typeName(a)}'`);
  return kindOf(a) === 'float' ? mkFloat(-num(a)) : mkInt(-num(a));
}

export function pos(a: Value): Value {
  a = unwrap(a);
  if (!isNumeric(a)) throw new OpError(`bad operand type for unary +: '${typeName(a)}'`);
  return kindOf(a) === 'float' ? a : num(a);
}

export function truthy(v: Value): boolean {
  v = unwrap(v);
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'number':
      return v !== 0;
    case 'string':
      return v.length > 0;
  }
  if (v instanceof PyFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  return isDict(v) && dictKeys(v).length > 0;
}

const MAX_DEPTH = 500;

export function eq(a: Value, b: Value, depth = 0): boolean {
  if (depth > MAX_DEPTH) throw new OpError('comparison nested too deeply');
  tick();
  a = unwrap(a);
  b = unwrap(b);
  if (a === b) return !(typeof a === 'number' && Number.isNaN(a));
  if (isNumeric(a) && isNumeric(b)) return num(a) === num(b);
  const ka = kindOf(a);
  if (ka !== kindOf(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => eq(v, b[i], depth + 1));
  }
  if (isDict(a) && isDict(b)) {
    const [x, y] = [a, b];
    const kx = dictKeys(x);
    if (kx.length !== dictKeys(y).length) return false;
    return kx.every((k) => Object.hasOwn(y, k) && eq(x[k], y[k], depth + 1));
  }
  return false;
}

/** Python ordering: negative/zero/positive, or OpError for unorderable types. */
export function compare(a: Value, b: Value, op: string, depth = 0): number {
  if (depth > MAX_DEPTH) throw new OpError('comparison nested too deeply');
  tick();
  a = unwrap(a);
  b = unwrap(b);
  if (isNumeric(a) && isNumeric(b)) {
    const x = num(a);
    const y = num(b);
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
  }
  if (kindOf(a) === kindOf(b)) {
    if (typeof a === 'string' && typeof b === 'string') return compareStr(a, b);
    if (Array.isArray(a) && Array.isArray(b)) {
      const [x, y] = [a, b];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        if (!eq(x[i], y[i], depth + 1)) return compare(x[i], y[i], op, depth + 1);
      }
      return x.length - y.length;
    }
  }
  throw new OpError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

export function lt(a: Value, b: Value): boolean {
  return compare(a, b, '<') < 0;
}
export function le(a: Value, b: Value): boolean {
  return compare(a, b, '<=') <= 0;
}
export function gt(a: Value, b: Value): boolean {
  return compare(a, b, '>') > 0;
}
export function ge(a: Value, b: Value): boolean {
  return compare(a, b, '>=') >= 0;
}

/** Python `item in container`. */
export function contains(container: Value, item: Value): boolean {
  container = unwrap(container);
  item = unwrap(item);
  if (typeof container === 'string') {
    if (typeof item !== 'string') {
      throw new OpError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    }
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => eq(x, item));
  if (isDict(container)) {
    const ki = kindOf(item);
    if (ki === 'list' || ki === 'dict') throw new OpError(`unhashable type: '${ki}'`);
    if (ki !== 'str' && ki !== 'int') return false;
    const key = String(item);
    return Object.hasOwn(container, key) && cleanRead(container[key]) !== undefined;
  }
  throw new OpError(`argument of type '${typeName(container)}' is not iterable`);
}
