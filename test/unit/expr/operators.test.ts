import { describe, expect, it } from 'vitest';
import { ExprEvalError, PyFloat } from '../../../src/config/expr/index.js';
import { e, thrown, v } from './helpers.js';

describe('arithmetic with Python semantics (spec 3.2)', () => {
  it.each([
    ['3 + 4', '7'],
    ['5 - 2', '3'],
    ['2 * 5', '10'],
    ['5 / 2', '2.5'],
    ['4 / 2', '2.0'],
    ['5 // 2', '2'],
    ['7 % 2', '1'],
    ['-7 // 2', '-4'],
    ['7 // -2', '-4'],
    ['-7 % 3', '2'],
    ['7 % -3', '-2'],
    ['7.5 // 2', '3.0'],
    ['-7.5 % 2', '0.5'],
    ['-0.0 % 5', '0.0'],
    ['0.0 % -5', '-0.0'],
    ['2 ** 10', '1024'],
    ['2 ** -1', '0.5'],
    ['2 ** 0.5', '1.4142135623730951'],
    ['1 + 2.0', '3.0'],
    ['0.1 + 0.2', '0.30000000000000004'],
    ['True + 1', '2'],
    ['True + True', '2'],
    ['-true', '-1'],
    ['+3', '3'],
    ['1e308 * 10', 'inf'],
    ['2 ** 52', '4503599627370496'],
    ["'a' + 'b'", 'ab'],
    ["'4' * 2", '44'],
    ["2 * 'ab'", 'abab'],
    ["'a' * -1", ''],
    ["'a' * true", 'a'],
    ['[1] * 3', '[1, 1, 1]'],
    ['3 * [1]', '[1, 1, 1]'],
    ['[1] + [2]', '[1, 2]'],
    ['(1,) + (2,)', '(1, 2)'],
    ['(1,) * 2', '(1, 1)'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('keeps Python typing of results', () => {
    expect(v('4 / 2')).toEqual(new PyFloat(2));
    expect(v('4 // 2')).toBe(2);
    expect(v('2.0 * 3')).toEqual(new PyFloat(6));
    expect(v('0 * -1')).toBe(0);
    expect(Object.is(v('0 * -1'), -0)).toBe(false);
  });

  it.each([
    ["'4' + 1", 'can only concatenate str (not "int") to str'],
    ["1 + '4'", "unsupported operand type(s) for +: 'int' and 'str'"],
    ['[1] + (2,)', 'can only concatenate list (not "tuple") to list'],
    ["'a' * 2.0", "can't multiply sequence by non-int of type 'float'"],
    ["'a' - 'b'", "unsupported operand type(s) for -: 'str' and 'str'"],
    ['1 / 0', 'division by zero'],
    ['1 // 0', 'integer division or modulo by zero'],
    ['1 % 0', 'integer division or modulo by zero'],
    ['1.0 // 0', 'float floor division by zero'],
    ['5.5 % 0', 'float modulo'],
    ['0 ** -1', '0.0 cannot be raised to a negative power'],
    ["-'a'", "bad operand type for unary -: 'str'"],
    ['2.0 ** 1024', 'numerical result out of range'],
    ["'x' * 100000000", 'result too large'],
    ['10 ** 20', 'integer result beyond ±2^53 (9007199254740991) cannot be computed exactly'],
    ['9007199254740991 + 2', 'cannot be computed exactly'],
  ])('%s is an evaluation error (%s)', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain(msg);
    expect((err as ExprEvalError).expression).toBe(src);
  });

  it('names the failing sub-expression, not the whole one', () => {
    const err = thrown(() => e("1 + ('4' + 1) * 2")) as ExprEvalError;
    expect(err.expression).toBe("'4' + 1");
  });
});

describe('config §2.2 consequences', () => {
  it('an untyped numeric variable is a string: X * 2 repeats, X + 1 fails', () => {
    const scope = { variables: { X: '4' }, X: '4' };
    expect(e('variables.X * 2', scope)).toBe('44');
    expect(thrown(() => e('X + 1', scope))).toBeInstanceOf(ExprEvalError);
  });

  it('an integer-typed variable does arithmetic', () => {
    const scope = { variables: { X: 4 }, X: 4 };
    expect(e('variables.X * 2', scope)).toBe('8');
    expect(e('X + 1', scope)).toBe('5');
  });
});

describe('comparisons, membership, boolean logic', () => {
  it.each([
    ['3 > 1', 'True'],
    ['1 == 1.0', 'True'],
    ['true == 1', 'True'],
    ["1 == '1'", 'False'],
    ['none == none', 'True'],
    ['none == 0', 'False'],
    ['[1] == [1.0]', 'True'],
    ['[1] == (1,)', 'False'],
    ["{'a': [1]} == {'a': [1.0]}", 'True'],
    ['1 != 2', 'True'],
    ["'a' < 'b'", 'True'],
    ['[1, 2] < [1, 3]', 'True'],
    ['[1] < [1, 0]', 'True'],
    ['true < 2', 'True'],
    ['1 < 2 < 3', 'True'],
    ['3 > 2 == 2', 'True'],
    ['1 < 3 < 2', 'False'],
    ["'a' in 'cab'", 'True'],
    ['1 in [1]', 'True'],
    ['2 in (1, 2)', 'True'],
    ["'a' in {'a': 1}", 'True'],
    ['1 not in [2]', 'True'],
    ['1 in [1] in [[1]]', 'True'],
    ["'b' in ['a', 'b'] and 1", '1'],
    ["0 or 'x'", 'x'],
    ["'' or []", '[]'],
    ['1 and 0', '0'],
    ['not 1 == 2', 'True'],
    ['not 0', 'True'],
    ["'x' if '' else 'y'", 'y'],
    ["'x' if [] else 'y'", 'y'],
    ["'x' if {} else 'y'", 'y'],
    ["'x' if 0.0 else 'y'", 'y'],
    ["'x' if [0] else 'y'", 'x'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ["'a' < 1", "'<' not supported between instances of 'str' and 'int'"],
    ['none < 1', "'<' not supported between instances of 'NoneType' and 'int'"],
    ['(1, 2) < [1, 3]', "'<' not supported between instances of 'tuple' and 'list'"],
    ["1 in 'abc'", "'in <string>' requires string as left operand, not int"],
    ['1 in 5', "argument of type 'int' is not iterable"],
  ])('%s is an evaluation error', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toBe(msg);
  });

  it('short-circuits and/or/if so the other side is never evaluated', () => {
    expect(e('0 and NOPE')).toBe('0');
    expect(e('1 or NOPE')).toBe('1');
    expect(e("'a' if 1 else NOPE")).toBe('a');
    expect(e('1 > 2 < NOPE')).toBe('False');
  });
});

describe('precedence (Jinja2)', () => {
  it.each([
    ['1 + 2 * 3', '7'],
    ['(1 + 2) * 3', '9'],
    ['2 * 3 ~ 4', '64'],
    ["'a' ~ 1 == 'a1'", 'True'],
    ['1 ~ 2 ~ none', '12None'],
    ['10 - 2 - 3', '5'],
    ['2 ** 3 ** 2', '64'],
    ['-2 ** 2', '4'],
    ['- N ** 2', '16'],
    ['-[1][0]', '-1'],
    ['[1, 2, 3] | length + 1', '4'],
    ['-N | abs', '4'],
    ['not N | string', 'False'],
    ['N | string | length', '1'],
    ['1 + 2 is number', '2'],
    ['1 < 2 is number', 'False'],
    ['not N is defined', 'False'],
    ['1 if 0 else 2 if 0 else 3', '3'],
    ["'big' if WORKERS > 1 else 'small'", 'big'],
    ["(TP * PP) if EMPTY == '' else (TP * 2)", '4'],
    ['not 1 and 0', 'False'],
    ['1 or 0 and 0', '1'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('binds ~ tighter than + (Jinja2), so mixing them is a type error', () => {
    expect(thrown(() => e('1 + 2 ~ 3')).message).toBe("unsupported operand type(s) for +: 'int' and 'str'");
    expect(thrown(() => e('1 ~ 2 + 3')).message).toBe('can only concatenate str (not "int") to str');
  });
});

describe('printf-style % formatting', () => {
  it.each([
    ["'node-%02d' % 3", 'node-03'],
    ["'%s-%s' % ('a', 1)", 'a-1'],
    [
      "'%5.1f|%-8.3f|%+.2f|% .2f|%08.3f' % (3.14159, 3.14159, 3.14159, 3.14159, -3.14159)",
      '  3.1|3.142   |+3.14| 3.14|-003.142',
    ],
    ["'%.0f %.0f %.0f' % (0.5, 1.5, 2.5)", '0 2 2'],
    ["'%.2f' % 0.125", '0.12'],
    ["'%.3f' % 2.675", '2.675'],
    ["'%g %g %g %g' % (100000, 1000000, 0.0001, 0.00001)", '100000 1e+06 0.0001 1e-05'],
    ["'%.3g %#.3g' % (1234.5, 1)", '1.23e+03 1.00'],
    ["'%e %.2e' % (12345.678, 0)", '1.234568e+04 0.00e+00'],
    ["'%x %X %o %#x %#o %#06x' % (255, 255, 8, 255, 8, 255)", 'ff FF 10 0xff 0o10 0x00ff'],
    ["'%c%c' % (65, 'z')", 'Az'],
    ["'%r %s' % ('x', none)", "'x' None"],
    ["'%(a)s-%(b)05.1f' % {'a': 1, 'b': 2.25}", '1-002.2'],
    ["'%s' % [1, 2]", '[1, 2]'],
    ["'100%%' % ()", '100%'],
    ["'%*d|' % (5, 3)", '    3|'],
    ["'%s-%s' | format('a', 1)", 'a-1'],
    ["'%(a)s' | format(a='x')", 'x'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ["'x' % 1", 'not all arguments converted during string formatting'],
    ["'%s %s' % (1,)", 'not enough arguments for format string'],
    ["'%d' % 'a'", '%d format: a real number is required, not str'],
    ["'%z' % 1", "unsupported format character 'z' (0x7a) at index 1"],
  ])('%s fails like Python', (src, msg) => {
    expect(thrown(() => e(src)).message).toBe(msg);
  });
});
