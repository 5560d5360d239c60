import { describe, expect, it } from 'vitest';
import {
  DomainValue,
  PyFloat,
  floatRepr,
  makeTuple,
  renderValue,
  toNative,
} from '../../../src/config/expr/index.js';
import { e, v } from './helpers.js';

describe('literals (spec 3.2)', () => {
  it.each([
    ['42', '42'],
    ["'a'", 'a'],
    ['"a"', 'a'],
    ['true', 'True'],
    ['True', 'True'],
    ['false', 'False'],
    ['none', 'None'],
    ['None', 'None'],
    ['[1, 2]', '[1, 2]'],
    ["{'a': 1}", "{'a': 1}"],
    ['(1, 2)', '(1, 2)'],
    ['(1,)', '(1,)'],
    ['()', '()'],
    ['1.5', '1.5'],
    ['1e3', '1000.0'],
    ['1E3', '1000.0'],
    ['1.5e-3', '0.0015'],
    ['1_000', '1000'],
    ['0x10', '16'],
    ['0o17', '15'],
    ['0b101', '5'],
    ["'a' 'b'", 'ab'],
    ['[1, 2,]', '[1, 2]'],
    ["{'a': 1,}", "{'a': 1}"],
    ['1, 2', '(1, 2)'],
  ])('%s renders %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('decodes Python string escapes; unknown escapes stay', () => {
    expect(e(String.raw`'a\x41\u00e9\101\n'`)).toBe('aAéA\n');
    expect(e(String.raw`'a\qb'`)).toBe('a\\qb');
    expect(e(String.raw`"it\"s"`)).toBe('it"s');
  });
});

describe('renderValue: Python str() (spec 3.6)', () => {
  it.each([
    [8, '8'],
    [0.5, '0.5'],
    [2.5, '2.5'],
    [new PyFloat(1000), '1000.0'],
    [new PyFloat(2), '2.0'],
    [0.00001, '1e-05'],
    [0.0001, '0.0001'],
    [new PyFloat(1e16), '1e+16'],
    [new PyFloat(1e15), '1000000000000000.0'],
    [1.5e-7, '1.5e-07'],
    [0.1 + 0.2, '0.30000000000000004'],
    [true, 'True'],
    [false, 'False'],
    [null, 'None'],
    [[1, 2], '[1, 2]'],
    [['a', 'b'], "['a', 'b']"],
    [{ a: 1 }, "{'a': 1}"],
    [{}, '{}'],
    [[], '[]'],
    ['plain', 'plain'],
  ])('%j → %s', (value, out) => {
    expect(renderValue(value)).toBe(out);
  });

  it('renders task node lists exactly like the spec table', () => {
    const nodes = [{ name: 'localhost', ip_address: '127.0.0.1', index: 0, num_gpus: null }];
    expect(renderValue(nodes)).toBe(
      "[{'name': 'localhost', 'ip_address': '127.0.0.1', 'index': 0, 'num_gpus': None}]",
    );
  });

  it('quotes nested strings with Python repr rules', () => {
    expect(renderValue(["it's"])).toBe(`["it's"]`);
    expect(renderValue(['a"b'])).toBe(`['a"b']`);
    expect(renderValue([`both'"`])).toBe(`['both\\'"']`);
    expect(renderValue(['back\\slash'])).toBe("['back\\\\slash']");
    expect(renderValue(['\n\t\r\x01\x7f'])).toBe("['\\n\\t\\r\\x01\\x7f']");
    expect(renderValue(['é\xa0\u2028😀'])).toBe("['é\\xa0\\u2028😀']");
  });

  it('renders tuples, nested containers and special floats', () => {
    expect(renderValue(makeTuple([1]))).toBe('(1,)');
    expect(renderValue([1, [2, makeTuple([3])], { k: null }])).toBe("[1, [2, (3,)], {'k': None}]");
    expect(floatRepr(Infinity)).toBe('inf');
    expect(floatRepr(-Infinity)).toBe('-inf');
    expect(floatRepr(NaN)).toBe('nan');
    expect(floatRepr(-0)).toBe('-0.0');
    expect(floatRepr(1e22)).toBe('1e+22');
    expect(floatRepr(5e-324)).toBe('5e-324');
    expect(floatRepr(12345678901234568)).toBe('1.2345678901234568e+16');
    expect(floatRepr(123456789012345.6)).toBe('123456789012345.6');
  });

  it('prints big integers with all digits and a variable as its value', () => {
    expect(renderValue(2 ** 62)).toBe('4611686018427387904');
    expect(renderValue(10 ** 21)).toBe('1000000000000000000000');
    expect(renderValue(new DomainValue(8, [4, 8]))).toBe('8');
    expect(renderValue([new DomainValue('x', null)])).toBe("['x']");
  });

  it('renders recursive structures without overflowing', () => {
    const a: unknown[] = [1];
    a.push(a);
    expect(renderValue(a as never)).toBe('[1, [...]]');
  });
});

describe('toNative', () => {
  it('unwraps floats, variables and tuples into plain JS', () => {
    expect(
      toNative([new PyFloat(2), new DomainValue(3, [3]), makeTuple([1, 2]), { a: new PyFloat(1) }]),
    ).toEqual([2, 3, [1, 2], { a: 1 }]);
  });

  it('keeps a "__proto__" key as data', () => {
    const out = toNative(v("{'__proto__': 1}")) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
  });
});
