/**
 * The expression language at the edges of Python and Jinja2: every expected value here is what
 * Jinja2 3.1.6 renders for the same `{{ … }}` (checked side by side when these were written), and
 * every error is one Jinja2 raises too, unless the case says where sflow deliberately differs.
 */
import { describe, expect, it } from 'vitest';
import { ExprEvalError, ExprUndefinedError, type Scope } from '../../../src/config/expr/index.js';
import { e as render, syntaxError, thrown } from './helpers.js';

const scope = (): Scope => ({ N: 4, TP: 4, D: { a: 1, b: [1, 2] } });
const e = (src: string): string => render(src, scope());

describe('tests (is …) beyond the common ones', () => {
  it.each([
    ["'abc' is lower", 'True'],
    ["'aBc' is lower", 'False'],
    ["'123' is lower", 'False'],
    ["'ABC' is upper", 'True'],
    ["'AbC' is upper", 'False'],
    ["'12' is upper", 'False'],
    ['3 is lower', 'False'],
    ['3 is upper', 'False'],
    ['N is le 4', 'True'],
    ['N is le 3', 'False'],
    ['N is le 5', 'True'],
    ['N is ge 4', 'True'],
    ['N is ge 5', 'False'],
    ['N is ge 3', 'True'],
    ['N is lessthan 5', 'True'],
    ['N is lessthan 4', 'False'],
    ['N is greaterthan 5', 'False'],
    ['N is greaterthan 3', 'True'],
    ['N is sameas 4', 'True'],
    ['N is sameas 4.0', 'False'],
    ['N is sameas true', 'False'],
    ['1 is sameas true', 'False'],
    ['1 is sameas 1.0', 'False'],
    ["'a' is sameas 'a'", 'True'],
    ["'a' is sameas 'b'", 'False'],
    ['D is sameas D', 'True'],
    ['D.b is sameas D.b', 'True'],
    ['D is sameas D.b', 'False'],
    ['[1] is sameas [1]', 'False'],
    ['none is sameas none', 'True'],
    ['none is sameas 0', 'False'],
    ['(1, 2) is sequence', 'True'],
    ['D is sequence', 'True'],
    ['D is iterable', 'True'],
    ['3 is sequence', 'False'],
    ['none is iterable', 'False'],
    ['(1,) is iterable', 'True'],
    ['N is divisibleby TP', 'True'],
    ['N is eq TP', 'True'],
    ['N is in D', 'False'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['1 is frobnicate', "unknown test 'frobnicate'"],
    ['1 is lowr', "unknown test 'lowr'; did you mean 'lower'?"],
    ['1 is number(3)', "test 'number' takes 0 argument(s), got 1"],
    ['1 is divisibleby(2, 3)', "test 'divisibleby' takes 1 argument(s), got 2"],
    ['1 is divisibleby(a=2)', "test 'divisibleby' takes no keyword arguments"],
  ])('%s is refused when compiled: %s', (src, msg) => {
    expect(syntaxError('${{ ' + src + ' }}').message).toBe(msg);
  });
});

describe('range(), slices and calls', () => {
  it.each([
    ['range(3) | list', '[0, 1, 2]'],
    ['[1,2][:None]', '[1, 2]'],
    ['[1,2,3][-5:]', '[1, 2, 3]'],
    ['[1,2,3][-5::-1]', '[]'],
    ['[1,2,3][-1::-1]', '[3, 2, 1]'],
    ['[1,2,3][:-5:-1]', '[3, 2, 1]'],
    ['[1,2,3][5::-1]', '[3, 2, 1]'],
    ['[1,2,3][-2:]', '[2, 3]'],
    ['[1,2,3][:-1:-1]', '[]'],
    ["'abc'[5:]", ''],
    ["'abc'[::-1]", 'cba'],
    ['(1,2,3)[1:]', '(2, 3)'],
    ['(7, 2)[1:]', '(2,)'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['range(1,2,3,4)', 'range expected 1 to 3 arguments, got 4'],
    ['range()', 'range expected 1 to 3 arguments, got 0'],
    ['range(a=1)', 'range() takes no keyword arguments'],
    ['range(1, stop=2)', 'range() takes no keyword arguments'],
    ['range(3)(1)', "calling 'range(3)' is not supported; the only function available is range()"],
    ['f(a=1, a=2)', "keyword argument 'a' repeated"],
    ["'%s' | format(a=1, a=2)", "keyword argument 'a' repeated"],
    ['(1, 2', "unexpected '}', expected ')'"],
    ['[1, 2', "unexpected '}', expected ']'"],
    ['(,)', "expected an expression after '(', got ','"],
  ])('%s is refused when compiled: %s', (src, msg) => {
    expect(syntaxError('${{ ' + src + ' }}').message).toBe(msg);
  });

  it.each([
    ['[1,2][::0]', 'slice step cannot be zero'],
    ["[1,2][1:'a']", 'slice indices must be an integer or None'],
    ["[1,2]['a':]", 'slice indices must be an integer or None'],
    ["[1,2][::'a']", 'slice step must be an integer or None'],
  ])('%s fails: %s', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain(msg);
  });

  // sflow: slicing what is not a sequence is undefined, so `| default` applies (Jinja2 raises)
  it.each(['3[1:]', 'N[1:]', 'D[1:]'])('%s is undefined', (src) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprUndefinedError);
    expect(err.message).toContain(`'${src}' is undefined`);
    expect(e(`${src} | default('none')`)).toBe('none');
  });
});

describe('arithmetic and comparisons at the edges', () => {
  it.each([
    ['2 ** 0.5', '1.4142135623730951'],
    ['(-8) ** 2.0', '64.0'],
    ['(-8) ** 3', '-512'],
    ['+true', '1'],
    ['+N', '4'],
    ['+2.5', '2.5'],
    ['7 // 2', '3'],
    ['-7 // 2', '-4'],
    ['7.5 // 2', '3.0'],
    ['-7.5 // 2', '-4.0'],
    ['0.0 // 1', '0.0'],
    ['-0.0 // 1', '-0.0'],
    ['1 // -3.0', '-1.0'],
    ['1 // 3.0', '0.0'],
    ['1e300 * 1e300 // 1', 'nan'],
    ['[1] < [1, 2]', 'True'],
    ['[1, 2] <= [1, 2]', 'True'],
    ['[1, 3] <= [1, 2]', 'False'],
    ['[2] >= [1, 5]', 'True'],
    ['[1] >= [1, 5]', 'False'],
    ['[1] > []', 'True'],
    ["D == {'a': 1, 'b': [1, 2]}", 'True'],
    ["D == {'a': 1}", 'False'],
    ["D == {'a': 1, 'c': [1, 2]}", 'False'],
    ["D == {'a': 1, 'b': [1, 3]}", 'False'],
    ["{'a': 1} != {'a': 2}", 'True'],
    ['(1, 2) == [1, 2]', 'False'],
    ['[1,[2,[3]]] == [1,[2,[3]]]', 'True'],
    ['[1,[2,[3]]] == [1,[2,[4]]]', 'False'],
    ['1 in D', 'False'],
    ["'a' in D", 'True'],
    ['none in D', 'False'],
    ['1.5 in D', 'False'],
    ['[1] in [[1]]', 'True'],
    ["{'a':1} in [{'a':1}]", 'True'],
    ["'x' in 'xyz'", 'True'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['(-8) ** 0.5', 'a negative number raised to a fractional power gives a complex number'],
    ['-8 ** 0.5', 'a negative number raised to a fractional power gives a complex number'],
    ["+'a'", "bad operand type for unary +: 'str'"],
    ["-'a'", "bad operand type for unary -: 'str'"],
    ['[1] in D', "unhashable type: 'list'"],
    ['{} in D', "unhashable type: 'dict'"],
    ["1 in 'xyz'", "'in <string>' requires string as left operand, not int"],
    ['1 in 3', "argument of type 'int' is not iterable"],
    ["[1] < ['a']", "'<' not supported between instances of 'int' and 'str'"],
    // sflow: integers are exact only up to 2^53, and a result past it is an error, not rounded
    ['10 ** 400', 'integer result too large'],
    ['2 ** 53', 'integer result beyond ±2^53 (9007199254740991) cannot be computed exactly'],
    // sflow: dict keys are strings (a recipe's values are YAML and JSON)
    ['{1.5: 2}', 'dict keys must be strings, got float'],
    ['{[1]: 2}', 'dict keys must be strings, got list'],
  ])('%s fails: %s', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain(msg);
  });

  it('an integer literal past 2^53 is refused when compiled (sflow: it could not be exact)', () => {
    expect(syntaxError('${{ 9007199254740993 }}').message).toContain(
      'integer 9007199254740993 is beyond ±2^53',
    );
    expect(e('9007199254740991')).toBe('9007199254740991');
  });

  it('comparisons nested past 500 levels fail instead of exhausting the stack', () => {
    const nested = (depth: number, leaf: number): unknown => {
      let v: unknown = leaf;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    const s = { A: nested(600, 1), B: nested(600, 2) } as Scope;
    expect(thrown(() => render('A == B', s)).message).toContain('comparison nested too deeply');
    expect(thrown(() => render('A < B', s)).message).toContain('comparison nested too deeply');
    expect(render('A == B', { A: nested(400, 1), B: nested(400, 1) } as Scope)).toBe('True');
    expect(render('A < B', { A: nested(400, 1), B: nested(400, 2) } as Scope)).toBe('True');
  });
});

describe('sizes and spacing', () => {
  it.each([
    ["'ab' * 9007199254740991", 'result too large (about 1.8e+16 characters or items; at most 1000000)'],
    ["'ab' * 1000000000", 'result too large (2000000000 characters or items; at most 1000000)'],
  ])('%s fails: %s', (src, msg) => {
    expect(thrown(() => e(src)).message).toContain(msg);
  });

  it('Unicode spaces separate tokens as ASCII ones do (Python str.isspace)', () => {
    expect(render('\u00a0N\u3000+\u2003TP\u00a0', scope())).toBe('8');
  });
});

describe('string literals (Python escapes)', () => {
  it.each([
    ["'\\U0001F600'", '😀'],
    ["'\\x41\\u00e9\\101'", 'AéA'],
    ["'\\q'", '\\q'],
    ["'a\\\\b'", 'a\\b'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ["'\\xZZ'", 'truncated \\xXX escape', 7],
    ["'a\\x4'", 'truncated \\xXX escape', 8],
    ["'\\u12'", 'truncated \\uXXXX escape', 7],
    ["'\\U0011000'", 'truncated \\UXXXXXXXX escape', 7],
    ["'\\U00110000'", 'illegal Unicode character (past U+10FFFF)', 7],
  ])('%s is refused: %s, at the backslash', (src, msg, at) => {
    expect(syntaxError('x ${{ ' + src + ' }}')).toMatchObject({ message: msg, offset: at });
  });

  it('an escape after a CR LF line end is placed in the source as written', () => {
    expect(syntaxError("${{ 'a\r\n\\xZ' }}")).toMatchObject({ message: 'truncated \\xXX escape', offset: 8 });
  });
});

describe('int, float and round like Python', () => {
  it.each([
    ["'-12' | int", '-12'],
    ["'+12' | int", '12'],
    ["'-0' | int", '0'],
    ["'0x1f' | int(0, 0)", '31'],
    ["'0o17' | int(0, 0)", '15'],
    ["'0b101' | int(0, 0)", '5'],
    ["'0X_1F' | int(0, 0)", '31'],
    ["'000' | int(0, 0)", '0'],
    ["'0_0' | int(0, 0)", '0'],
    // base 0 refuses a leading zero; Jinja2 then reads it as a float
    ["'012' | int(0, 0)", '12'],
    ["'12' | int(0, 0)", '12'],
    ["'-0x10' | int(0, 0)", '-16'],
    ["'0x10' | int(0, 16)", '16'],
    ["'0b11' | int(0, 2)", '3'],
    ["'0o17' | int(0, 8)", '15'],
    ["'17' | int(0, 8)", '15'],
    ["'19' | int(0, 8)", '19'],
    ["'1e5' | int", '100000'],
    ["'-1.9' | int", '-1'],
    // int(float(x)) raises for these, and Jinja2 answers the default
    ["'inf' | int", '0'],
    ["'-inf' | int", '0'],
    ["'nan' | int", '0'],
    ["'-nan' | int(7)", '7'],
    ["'1e400' | int(3)", '3'],
    ["'infinity' | float", 'inf'],
    ["'-Infinity' | float", '-inf'],
    ["'+nan' | float", 'nan'],
    ["'1e3' | float", '1000.0'],
    ["'1_0.5' | float", '10.5'],
    ["'.5' | float", '0.5'],
    ["'5.' | float", '5.0'],
    ["'x' | float", '0.0'],
    ["'x' | float(2)", '2'],
    ['5 | round(-1)', '0'],
    ['15 | round(-1)', '20'],
    ['25 | round(-1)', '20'],
    ['35 | round(-1)', '40'],
    ['14 | round(-1)', '10'],
    ['16 | round(-1)', '20'],
    ['-25 | round(-1)', '-20'],
    ['-26 | round(-1)', '-30'],
    ['4 | round(-1)', '0'],
    ['1234 | round(-2)', '1200'],
    ['1250 | round(-2)', '1200'],
    ['1350 | round(-2)', '1400'],
    ['123.456 | round(-1)', '120.0'],
    ['0.5 | round(-1)', '0.0'],
    ['1e20 | round(2)', '1e+20'],
    ['1.5e-8 | round(10)', '1.5e-08'],
    ['0.000123456 | round(5)', '0.00012'],
    ['2.5 | round(0)', '2.0'],
    ['0.125 | round(2)', '0.12'],
    ['0.375 | round(2)', '0.38'],
    ['-0.125 | round(2)', '-0.12'],
    ['9.995 | round(2)', '9.99'],
    ['99.5 | round(0)', '100.0'],
    ['0.05 | round(1)', '0.1'],
    ['0.15 | round(1)', '0.1'],
    ['0.25 | round(1)', '0.2'],
    ['1e-320 | round(400)', '1e-320'],
    ['123456.7 | round(-7)', '0.0'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('a NaN number is int’s default; infinity fails (int(inf) raises OverflowError in Jinja2)', () => {
    const s = { NAN: Number.NaN, INF: Number.POSITIVE_INFINITY } as Scope;
    expect(render('NAN | int(5)', s)).toBe('5');
    expect(render('NAN | int', s)).toBe('0');
    const err = thrown(() => render('INF | int', s));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain('cannot convert float infinity to integer');
  });

  it.each([
    // sflow: the bases Python's literals use, and exact integers only
    ["'z' | int(0, 36)", 'int() base 36 is not supported'],
    ["'5' | int(0, 'a')", "'base' must be an integer, got str"],
    ["'9007199254740993' | int", 'integer 9007199254740993 is beyond ±2^53'],
  ])('%s fails: %s', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain(msg);
  });
});

describe('tojson, replace, trim, default, format, map', () => {
  it.each([
    ["'a\"b\\\\c' | tojson", '"a\\"b\\\\c"'],
    ["'line\\nnext' | tojson", '"line\\nnext"'],
    ["'a\\tb\\rc' | tojson", '"a\\tb\\rc"'],
    ["'\\b\\f' | tojson", '"\\b\\f"'],
    ["'\\x01\\x7f' | tojson", '"\\u0001\\u007f"'],
    ["'<&>\\'' | tojson", '"\\u003c\\u0026\\u003e\\u0027"'],
    ["'é' | tojson", '"\\u00e9"'],
    ["{'b': 1, 'a': [1, 'x']} | tojson", '{"a": [1, "x"], "b": 1}'],
    ["{'b': 1, 'a': [1, 'x']} | tojson(2)", '{\n  "a": [\n    1,\n    "x"\n  ],\n  "b": 1\n}'],
    ['[] | tojson', '[]'],
    ['{} | tojson(2)', '{}'],
    ['1.5 | tojson', '1.5'],
    ['none | tojson', 'null'],
    ['true | tojson', 'true'],
    ["'abc' | replace('', '-')", '-a-b-c-'],
    ["'abc' | replace('', '-', 2)", '-a-bc'],
    ["'abc' | replace('', '-', 0)", 'abc'],
    ["'abc' | replace('', '-', 4)", '-a-b-c-'],
    ["'abc' | replace('', '-', 5)", '-a-b-c-'],
    ["'aaa' | replace('a', 'b', 2)", 'bba'],
    ["'aaa' | replace('a', 'b', 0)", 'aaa'],
    ["'aaa' | replace('a', 'b', -1)", 'bbb'],
    ["'aaa' | replace('a', 'b', 9)", 'bbb'],
    ["'  xy ' | trim", 'xy'],
    ["'xxyxx' | trim('x')", 'y'],
    ["'xyx' | trim('xy')", ''],
    ['[1,2] | last', '2'],
    ["'ab' | last", 'b'],
    ['NOPE | default', ''],
    ["NOPE | default('d')", 'd'],
    ["'' | default('d', true)", 'd'],
    ["'' | default(boolean=true)", ''],
    ["'x' | default('d', true)", 'x'],
    ["'%s-%s' | format(1, 2)", '1-2'],
    ["'%(a)s' | format(a=1)", '1'],
    ["[1,2] | map('string') | list", "['1', '2']"],
    ["[{'a':1},{}] | map(attribute='a', default=0) | list", '[1, 0]'],
    ["'' | map('string') | list", '[]'],
    ["'ab' | map('upper') | join", 'AB'],
    ['3 | abs', '3'],
    ['-2.5 | abs', '2.5'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['[] | last', ExprUndefinedError, 'No last item, sequence was empty.'],
    ["'' | last", ExprUndefinedError, 'No last item, sequence was empty.'],
    ['[] | first', ExprUndefinedError, 'No first item, sequence was empty.'],
    [
      "'%s' | format(1, a=2)",
      ExprEvalError,
      "can't handle positional and keyword arguments at the same time",
    ],
    ['[1,2] | map | list', ExprEvalError, 'map requires a filter name or attribute='],
    ['[1,2] | map(3) | list', ExprEvalError, 'map: unknown filter 3'],
    ["[[1],[]] | map('first') | list", ExprEvalError, 'No first item, sequence was empty.'],
    [
      "[{'a':1}] | map(attribute='a', x=1) | list",
      ExprEvalError,
      'unexpected argument to map(attribute=…): x',
    ],
    [
      "[{'a':1}] | map('string', attribute='a') | list",
      ExprEvalError,
      'unexpected argument to map(attribute=…): positional',
    ],
    ["[{'a':1},{}] | map(attribute='a') | list", ExprEvalError, "dict object has no attribute 'a'"],
    ["[1,2] | join(',', 'x')", ExprEvalError, "int object has no attribute 'x'"],
    ["'a' | abs", ExprEvalError, "bad operand type for abs(): 'str'"],
  ])('%s fails', (src, type, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(type);
    expect(err.message).toContain(msg);
  });
});

describe('operators on every operand type', () => {
  it.each([
    ["2 * 'ab'", 'abab'],
    ['(1,) * 2', '(1, 1)'],
    ['[1, 2] * -1', '[]'],
    ["'ab' * 0", ''],
    ['3 * [0]', '[0, 0, 0]'],
    ['(1,) + (2,)', '(1, 2)'],
    ['[1] + [2]', '[1, 2]'],
    ["'ab' + 'cd'", 'abcd'],
    ['N - 1.5', '2.5'],
    ['N - 1', '3'],
    ['1.5 - N', '-2.5'],
    ['7 % -3', '-2'],
    ['-7 % 3', '2'],
    ['7.5 % -2', '-0.5'],
    ['-7.5 % 2', '0.5'],
    ['6 % -3', '0'],
    ['-6 % 3', '0'],
    ['6.0 % -3', '-0.0'],
    ['0.0 % -3', '-0.0'],
    ['-0.0 % 3', '0.0'],
    ['7 // -2', '-4'],
    ['-7 // -2', '3'],
    ['7.0 // -2', '-4.0'],
    ['1 // 1e-300', '9.999999999999999e+299'],
    ['0 // -5', '0'],
    ['0.0 // -5', '-0.0'],
    ['-0.0 // -5', '0.0'],
    ['1e308 // 1e-308', 'inf'],
    ['0.5 // 0.25', '2.0'],
    ['2.5 // 1', '2.0'],
    ['3.5 // 1', '3.0'],
    ['7 / 2', '3.5'],
    ['-7 / 2', '-3.5'],
    ['4 / 2', '2.0'],
    ['2 ** -1', '0.5'],
    ['(-2) ** -1', '-0.5'],
    ['(-2) ** 1e400', 'inf'],
    ['2 ** 0.5 ** 2', '2.0000000000000004'],
    ['+2.0', '2.0'],
    ['+(-0.0)', '-0.0'],
    ['-0.0', '-0.0'],
    ['-(0)', '0'],
    ['[1,2][-2]', '1'],
    ['[1,2][1]', '2'],
    ["'abc'[-1]", 'c'],
    ["'a😀b'[1]", '😀'],
    ["'a😀b'[-1]", 'b'],
    ["'a😀b' | length", '3'],
    ["'a😀b'[::-1]", 'b😀a'],
    ["'a😀b'[1:2]", '😀'],
    ['[1,2][true]', '2'],
    ["D['a']", '1'],
    ['D.a', '1'],
    ["{'1': 'x'}['1']", 'x'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ["'a' - 1", "unsupported operand type(s) for -: 'str' and 'int'"],
    ["1 - 'a'", "unsupported operand type(s) for -: 'int' and 'str'"],
    ["'a' // 1", "unsupported operand type(s) for //: 'str' and 'int'"],
    ["1 // 'a'", "unsupported operand type(s) for //: 'int' and 'str'"],
    ["'a' % 1", 'not all arguments converted during string formatting'],
    ["1 % 'a'", "unsupported operand type(s) for %: 'int' and 'str'"],
    ["'a' ** 2", "unsupported operand type(s) for ** or pow(): 'str' and 'int'"],
    ["2 ** 'a'", "unsupported operand type(s) for ** or pow(): 'int' and 'str'"],
    ["'a' / 1", "unsupported operand type(s) for /: 'str' and 'int'"],
    ["1 / 'a'", "unsupported operand type(s) for /: 'int' and 'str'"],
    ['none + 1', "unsupported operand type(s) for +: 'NoneType' and 'int'"],
    ['D + D', "unsupported operand type(s) for +: 'dict' and 'dict'"],
    ["[1] * 'a'", "can't multiply sequence by non-int of type 'str'"],
    ["'a' * 'b'", "can't multiply sequence by non-int of type 'str'"],
    ['[1] * [2]', "can't multiply sequence by non-int of type 'list'"],
    ["'ab' * 2.0", "can't multiply sequence by non-int of type 'float'"],
    ['none * 2', "unsupported operand type(s) for *: 'NoneType' and 'int'"],
    ["'a' + 1", 'can only concatenate str (not "int") to str'],
    ['[1] + (2,)', 'can only concatenate list (not "tuple") to list'],
    ['(1,) + [2]', 'can only concatenate tuple (not "list") to tuple'],
    ['5 % 0', 'integer division or modulo by zero'],
    ['5.0 % 0', 'float modulo'],
    ['5 // 0', 'integer division or modulo by zero'],
    ['5 / 0', 'division by zero'],
    ['0 ** -1', '0.0 cannot be raised to a negative power'],
    ['0.0 ** -1', '0.0 cannot be raised to a negative power'],
    ['(-8) ** (1.0/0)', 'division by zero'],
    ['10.0 ** 400', 'numerical result out of range'],
    ['+none', "bad operand type for unary +: 'NoneType'"],
    ['[1,2][-3]', "'[1,2][-3]' is undefined"],
    ['[1,2][2]', "'[1,2][2]' is undefined"],
    ["'abc'[5]", "''abc'[5]' is undefined"],
    ["'abc'[-4]", "''abc'[-4]' is undefined"],
    ["[1,2]['a']", "'[1,2]['a']' is undefined"],
    ['[1,2][1.0]', "'[1,2][1.0]' is undefined"],
    ['D[1]', "'D[1]' is undefined"],
    ['D.nope', "'D.nope' is undefined"],
    ['D[none]', "'D[none]' is undefined"],
    ['3.a', "'3.a' is undefined"],
    ['none.a', "'none.a' is undefined"],
    ['none[0]', "'none[0]' is undefined"],
    ['[1,2].a', "'[1,2].a' is undefined"],
    ["'ab'.a", "''ab'.a' is undefined"],
    ["'ab'['x']", "''ab'['x']' is undefined"],
  ])('%s fails: %s', (src, msg) => {
    expect(thrown(() => e(src)).message).toContain(msg);
  });
});

describe('strings by code point, as Python counts and orders them', () => {
  it.each([
    ["['😀', '\\uffff', 'a'] | sort", "['a', '\\uffff', '😀']"],
    ["'a😀' < 'a\\uffff'", 'False'],
    ["'😀' > '\\uffff'", 'True'],
    ["'a😀b' < 'a😀c'", 'True'],
    ["['😀b', '😀a', '😀'] | sort", "['😀', '😀a', '😀b']"],
    ["['😀', '\\uffff'] | max", '😀'],
    ["'é😀' | list", "['é', '😀']"],
    ["'😀x'[1]", 'x'],
    ["'😀😀' | replace('😀', 'x', 1)", 'x😀'],
    ["'x😀x' | trim('x')", '😀'],
    ["'😀' in 'a😀b'", 'True'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });
});

describe('what a scope may hold that is not data', () => {
  it('functions, symbols and JS undefined are missing; a bigint is a number', () => {
    const s = {
      F: () => 1,
      Y: Symbol('y'),
      U: undefined,
      B: 7n,
      D: { f: () => 1, n: 2 },
    } as unknown as Scope;
    for (const name of ['F', 'Y', 'U', 'D.f'])
      expect(thrown(() => render(name, s))).toBeInstanceOf(ExprUndefinedError);
    expect(render('B + 1', s)).toBe('8');
    expect(render('D | length', s)).toBe('1');
    expect(render('D', s)).toBe("{'n': 2}");
  });

  it.each(['D.constructor', 'D.__proto__', 'D.__class__', "D['constructor']", 'N.prototype'])(
    '%s never resolves (sflow: JS and Python internals are not data)',
    (src) => {
      expect(thrown(() => e(src))).toBeInstanceOf(ExprUndefinedError);
    },
  );

  it('a key that only looks internal is data', () => {
    expect(render('D.__x', { D: { __x: 1 } })).toBe('1');
    expect(render('D.____', { D: { ____: 2 } })).toBe('2');
  });
});
