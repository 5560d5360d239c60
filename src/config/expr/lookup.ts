/**
 * Sandboxed lookups: names, attributes, subscripts and slices. Only own data properties of the
 * scope and of dicts are ever read; JS/Python internals (`constructor`, `__proto__`, dunders)
 * never resolve. A failed lookup returns `NOT_FOUND` (the caller decides whether that is an error).
 */
import { OpError } from './errors.js';
import {
  DomainValue,
  type Value,
  cleanRead,
  isBlockedName,
  isDict,
  isIntLike,
  isTuple,
  kindOf,
  makeTuple,
  num,
  strChars,
  strLen,
  unwrap,
} from './values.js';

export const NOT_FOUND: unique symbol = Symbol('not found');
export type Found = Value | typeof NOT_FOUND;

function ownData(obj: object, key: string): Found {
  if (isBlockedName(key) || !Object.hasOwn(obj, key)) return NOT_FOUND;
  const v = cleanRead(Reflect.get(obj, key));
  return v === undefined ? NOT_FOUND : v;
}

/** A free name: an own property of the scope. */
export function lookupName(scope: object, name: string): Found {
  return ownData(scope, name);
}

/** `obj.name` (Jinja2: attribute first, then item). */
export function getAttr(obj: Value, name: string): Found {
  if (obj instanceof DomainValue) {
    if (name === 'domain' && obj.domain !== null) return obj.domain;
    return getAttr(obj.value, name);
  }
  return isDict(obj) ? ownData(obj, name) : NOT_FOUND;
}

function index(len: number, i: number): number {
  const j = i < 0 ? i + len : i;
  return j >= 0 && j < len ? j : -1;
}

/** `obj[key]` (Jinja2: item first, then attribute). */
export function getItem(obj: Value, key: Value): Found {
  key = unwrap(key);
  if (obj instanceof DomainValue) {
    const r = getItem(obj.value, key);
    if (r === NOT_FOUND && key === 'domain' && obj.domain !== null) return obj.domain;
    return r;
  }
  if (obj === null || typeof obj !== 'object') {
    if (typeof obj === 'string' && isIntLike(key)) {
      const chars = obj.length === strLen(obj) ? null : strChars(obj);
      const j = index(chars ? chars.length : obj.length, num(key));
      return j < 0 ? NOT_FOUND : chars ? chars[j] : obj[j];
    }
    return NOT_FOUND;
  }
  if (Array.isArray(obj)) {
    if (!isIntLike(key)) return NOT_FOUND;
    const j = index(obj.length, num(key));
    if (j < 0) return NOT_FOUND;
    const v = cleanRead(obj[j]);
    return v === undefined ? NOT_FOUND : v;
  }
  if (!isDict(obj)) return NOT_FOUND;
  if (typeof key === 'string') return ownData(obj, key);
  if (kindOf(key) === 'int') return ownData(obj, String(key));
  return NOT_FOUND;
}

function sliceBound(v: Value | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  v = unwrap(v);
  if (v === null) return undefined;
  if (!isIntLike(v)) {
    throw new OpError(`slice ${what} must be an integer or None`);
  }
  return num(v);
}

/** Python slice `obj[start:stop:step]` on str, list and tuple. */
export function getSlice(obj: Value, start?: Value, stop?: Value, step?: Value): Found {
  const seq = unwrap(obj);
  const st = sliceBound(step, 'step') ?? 1;
  if (st === 0) throw new OpError('slice step cannot be zero');
  if (typeof seq !== 'string' && !Array.isArray(seq)) return NOT_FOUND;
  const items: Value[] = typeof seq === 'string' ? strChars(seq) : seq;
  const len = items.length;
  const norm = (b: number | undefined, dflt: number): number => {
    if (b === undefined) return dflt;
    if (b < 0) return Math.max(b + len, st < 0 ? -1 : 0);
    return Math.min(b, st < 0 ? len - 1 : len);
  };
  const lo = norm(sliceBound(start, 'indices'), st < 0 ? len - 1 : 0);
  const hi = norm(sliceBound(stop, 'indices'), st < 0 ? -1 : len);
  const out: Value[] = [];
  if (st > 0) for (let i = lo; i < hi; i += st) out.push(cleanRead(items[i]) ?? null);
  else for (let i = lo; i > hi; i += st) out.push(cleanRead(items[i]) ?? null);
  if (typeof seq === 'string') return out.join('');
  return isTuple(seq) ? makeTuple(out) : out;
}
