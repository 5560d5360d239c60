/**
 * The parser through whole expressions: precedence, trailing commas, tests and filters in
 * chains, and the error each malformed expression gets (message and offset in the template).
 * Values are what Jinja2 3.1.6 renders for the same `{{ … }}`; sflow's own errors say where
 * it is stricter (method calls, int dict keys, ranges past 100,000 items).
 */
import { describe, expect, it } from 'vitest';
import { ExprSyntaxError, compileTemplate, type Scope } from '../../../src/config/expr/index.js';
import { e as render, syntaxError, thrown } from './helpers.js';

const scope = (): Scope => ({
  N: 4,
  D: { a: 1, b: [1, 2] },
  L: [
    [5, 6],
    [7, 8],
  ],
});
const e = (src: string): string => render(src, scope());

describe('expressions that parse', () => {
  it.each([
    ['range(0, 10, 3) | list', '[0, 3, 6, 9]'],
    ['range(5, 0, -2) | list', '[5, 3, 1]'],
    ['range(1, 0) | list', '[]'],
    ['1 if false', ''],
    ["(1 if false) | default('d')", 'd'],
    ['1 if true', '1'],
    ["'y' if N > 3 else 'n'", 'y'],
    ["'y' if N > 5 else 'n'", 'n'],
    ["{'a': 1, 'a': 2}", "{'a': 2}"],
    ["{'k': N}['k']", '4'],
    ['False', 'False'],
    ['false', 'False'],
    ['True', 'True'],
    ['None', 'None'],
    ['none', 'None'],
    ["'a' 'b'", 'ab'],
    ['[1, 2, 3][::2]', '[1, 3]'],
    ['[1, 2, 3][:2:]', '[1, 2]'],
    ['[1,2,3][1:2:1]', '[2]'],
    ['[1,]', '[1]'],
    ['(1,2,)', '(1, 2)'],
    ["{'a': 1,}", "{'a': 1}"],
    ['N is divisibleby 2 and true', 'True'],
    ['N is divisibleby 2.0', 'True'],
    ['N is in [4, 5]', 'True'],
    ["N is eq {'a':1}", 'False'],
    ['N is eq(4) and true', 'True'],
    ['N is even or 1', 'True'],
    ['N is number and N is even', 'True'],
    ['N is defined == true', 'True'],
    ['not N is even', 'False'],
    ['N is not even', 'False'],
    ['L.1.0', '7'],
    ['N | upper | lower', '4'],
    ['N | int | string | length', '1'],
    ['1 < 2 < 3', 'True'],
    ['3 > 2 > 2', 'False'],
    ['1 == 1 != 2', 'True'],
    ['1 in [1] in [[1]]', 'True'],
    ['1 not in [2]', 'True'],
    ['not 1 in [1]', 'False'],
    ["N ~ 'x' ~ 1.5", '4x1.5'],
    ['-N ** 2', '16'],
    ['(-N) ** 2', '16'],
    ['2 ** -N', '0.0625'],
    ['not not N', 'True'],
    ["N and 0 or 'z'", 'z'],
    ["0 or none or ''", ''],
    ['N if N else 0', '4'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });
});

describe('expressions refused when compiled', () => {
  it.each([
    ['range(3, step=1)', 'range() takes no keyword arguments', 13],
    ['N.foo(1)', 'calling methods is not supported; the only function available is range()', 4],
    ['D.keys()', 'calling methods is not supported; the only function available is range()', 4],
    ["'a'.upper()", 'calling methods is not supported; the only function available is range()', 4],
    ['N(1)', "calling 'N' is not supported; the only function available is range()", 4],
    ['(N)(1)', "calling 'N' is not supported; the only function available is range()", 5],
    ['[1](0)', "calling '[1]' is not supported; the only function available is range()", 4],
    ['1 +', "expected an expression after '+'", 8],
    ['1 + )', "unexpected ')'", 8],
    ['(1 + 2', "unexpected '}', expected ')'", 11],
    ['1 2', "unexpected '2'; expected an operator or '}}'", 6],
    ['N N', "unexpected 'N'; expected an operator or '}}'", 6],
    ['[1, 2][1', "unexpected '}', expected ']'", 13],
    ['[1][::', "unexpected '}', expected ']'", 11],
    ['f(1, a=2, 3)', 'positional argument follows keyword argument', 14],
    ['D | attr', "unknown filter 'attr'", 8],
    ['N | ', "expected a filter name after '|', got '}}'", 9],
    ['N is', "expected a test name after 'is', got '}}'", 9],
    ['N is 3', "expected a test name after 'is', got '3'", 9],
    ['N is not', "expected a test name after 'is', got '}}'", 13],
    ['N | 3', "expected a filter name after '|', got '3'", 8],
    ['not', "expected an expression after 'not'", 8],
    ['-', "expected an expression after '-'", 6],
    ['N |', "expected a filter name after '|', got '}}'", 8],
    ['(', "unexpected '}', expected ')'", 6],
    ['[', "unexpected '}', expected ']'", 6],
    ['{', "unexpected '}'", 7],
    ["{'a'}", "expected ':', got '}'", 8],
    ["{'a': }", "expected an expression after ':', got '}'", 10],
    ['N..a', "expected an attribute name or number after '.', got '.'", 6],
    ['N.', "expected an attribute name or number after '.', got '}}'", 7],
  ])('%s: %s at %d', (src, msg, at) => {
    expect(syntaxError('${{ ' + src + ' }}')).toMatchObject({ message: msg, offset: at });
  });
});

describe('expressions that fail when evaluated', () => {
  it.each([
    ["range('a')", "'str' object cannot be interpreted as an integer"],
    ["range(1, 'b')", "'str' object cannot be interpreted as an integer"],
    ['range(10000000)', 'range too big: more than 100000 items'],
    ['range(0, 5, 0) | list', 'range() arg 3 must not be zero'],
    ['{N: 1}', 'dict keys must be strings, got int'],
    ['FALSE', "'FALSE' is undefined"],
    ["N is divisibleby 'a'", "unsupported operand type(s) for %: 'int' and 'str'"],
    ['D.0', "'D.0' is undefined"],
  ])('%s: %s', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).not.toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toContain(msg);
  });
});

describe('references through every kind of node', () => {
  it.each([
    ['-A', [['A']]],
    ['range(B, C)', [['B'], ['C']]],
    ['L[D:E:F]', [['L'], ['D'], ['E'], ['F']]],
    ['L2[:G]', [['L2'], ['G']]],
    ['H if I else J', [['I'], ['H'], ['J']]],
    ['K if M', [['M'], ['K']]],
    ['N | default(O, boolean=P)', [['N'], ['O'], ['P']]],
    ['Q is divisibleby R', [['Q'], ['R']]],
    ['S < T < U', [['S'], ['T'], ['U']]],
    ["{'k': V, W: X}", [['V'], ['W'], ['X']]],
    ['Y[Z]', [['Y'], ['Z']]],
    ['(AA, [BB])', [['AA'], ['BB']]],
    ['not CC and DD', [['CC'], ['DD']]],
  ])('%s refers to %j', (src, refs) => {
    expect(compileTemplate('${{ ' + src + ' }}').references()).toEqual(refs);
  });
});

describe('an inline if without else', () => {
  it.each([
    ['(1 if false) is defined', 'False'],
    ['(1 if false) is undefined', 'True'],
    ['(1 if false) | default(5)', '5'],
    ['1 if false', ''],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  // sflow: an undefined value is not carried inside a list or dict (Jinja2 keeps an Undefined there)
  it.each(['(1 if false) + 1', '[1 if false] | length', "{'k': (1 if false)}"])('%s is undefined', (src) => {
    expect(thrown(() => e(src)).message).toContain(
      'the inline if-expression evaluated to false and no else section was defined',
    );
  });
});
