import { describe, expect, it } from 'vitest';
import { parseJsonKeepFloats } from '../../../src/outputs/json-read.js';
import { PyFloat, stableJson } from '../../../src/outputs/json-write.js';

describe('parseJsonKeepFloats', () => {
  it('reads back what stableJson wrote, floats keeping their Python look', () => {
    const doc = {
      a: new PyFloat(40),
      b: 7,
      c: [new PyFloat(1.5e-7), 'x "y" \\ z', null, true, false],
      d: { e: new PyFloat(NaN), f: new PyFloat(-Infinity), g: -0.25, h: 'ünï' },
    };
    const text = stableJson(doc);
    const back = parseJsonKeepFloats(text);
    expect(stableJson(back)).toBe(text);
    expect((back as { a: unknown }).a).toBeInstanceOf(PyFloat);
    expect((back as { b: unknown }).b).toBe(7);
  });

  it('a key named __proto__ is data, not a prototype; malformed text throws', () => {
    const v = parseJsonKeepFloats('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(() => parseJsonKeepFloats('{"a": 1,}')).toThrow(SyntaxError);
    expect(() => parseJsonKeepFloats('[1] 2')).toThrow(SyntaxError);
  });
});
