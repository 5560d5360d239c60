/**
 * Casting of matched text for `result:` patterns (config.md 5.11): `auto` tries int, then
 * float, then true/false, then a JSON object/array, else keeps the string. Explicit types
 * fail with a message that lands in the result's `errors`.
 */
import { PyFloat } from './json-write.js';
import { errorMessage } from '../util/errors.js';

export type ResultType = 'auto' | 'string' | 'int' | 'float' | 'bool' | 'json';
export type CastValue = number | PyFloat | boolean | string | null | unknown[] | Record<string, unknown>;

const INT = /^[+-]?\d+(?:_\d+)*$/;
const FLOAT = /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$/;

function toInt(s: string): number | undefined {
  const t = s.trim();
  return INT.test(t) ? Number(t.replace(/_/g, '')) : undefined;
}

function toFloat(s: string): PyFloat | undefined {
  const t = s.trim();
  if (!FLOAT.test(t)) return undefined;
  const v = Number(t.replace(/_/g, ''));
  return Number.isFinite(v) ? new PyFloat(v) : undefined;
}

const TRUE = new Set(['true', 'yes', 'on', '1', 'y']);
const FALSE = new Set(['false', 'no', 'off', '0', 'n']);

function toJson(s: string): unknown[] | Record<string, unknown> | undefined {
  const t = s.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    return v !== null && typeof v === 'object' ? (v as unknown[] | Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export type CastResult = { ok: true; value: CastValue } | { ok: false; error: string };

export function castValue(text: string, type: ResultType): CastResult {
  switch (type) {
    case 'string':
      return { ok: true, value: text };
    case 'int': {
      const v = toInt(text);
      return v === undefined
        ? { ok: false, error: `cannot cast ${JSON.stringify(text)} to int` }
        : { ok: true, value: v };
    }
    case 'float': {
      const v = toFloat(text);
      return v === undefined
        ? { ok: false, error: `cannot cast ${JSON.stringify(text)} to float` }
        : { ok: true, value: v };
    }
    case 'bool': {
      const t = text.trim().toLowerCase();
      if (TRUE.has(t)) return { ok: true, value: true };
      if (FALSE.has(t)) return { ok: true, value: false };
      return { ok: false, error: `cannot cast ${JSON.stringify(text)} to bool` };
    }
    case 'json': {
      try {
        return { ok: true, value: JSON.parse(text) as CastValue };
      } catch (e) {
        return {
          ok: false,
          error: `cannot parse ${JSON.stringify(truncate(text))} as JSON: ${errorMessage(e)}`,
        };
      }
    }
    case 'auto': {
      const i = toInt(text);
      if (i !== undefined) return { ok: true, value: i };
      const f = toFloat(text);
      if (f !== undefined) return { ok: true, value: f };
      const t = text.trim().toLowerCase();
      if (t === 'true') return { ok: true, value: true };
      if (t === 'false') return { ok: true, value: false };
      const j = toJson(text);
      if (j !== undefined) return { ok: true, value: j };
      return { ok: true, value: text };
    }
  }
}

export function truncate(s: string, n = 200): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}

/** Numeric view of a cast value, or undefined. */
export function numericOf(v: CastValue): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}
