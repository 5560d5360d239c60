import { describe, expect, it } from 'vitest';
import {
  ExprEvalError,
  ExprSyntaxError,
  ExprUndefinedError,
  compileTemplate,
} from '../../../src/config/expr/index.js';
import { e, thrown } from './helpers.js';

describe('filters used by shipped recipes (spec 3.2, example 03)', () => {
  it.each([
    ['[TP, PP, 8] | max', '8'],
    ['[TP, PP, 8] | min', '1'],
    ['[variables.GPUS_TOTAL // variables.GPUS_PER_WORKER, 1] | max', '2'],
    ["backends.box.nodes | map(attribute='name') | join(',')", 'localhost,localhost-1,localhost-2'],
    ["backends.box.nodes | map(attribute='ip_address') | join(',')", '127.0.0.1,127.0.0.1,127.0.0.1'],
    ['backends.box.nodes | length', '3'],
    ['task.w | map(attribute="gpus") | list', '[[0], [1, 2]]'],
    ['range(0, 2) | list', '[0, 1]'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });
});

describe('filters with Jinja2 semantics', () => {
  it.each([
    ['[1, 2] | join', '12'],
    ["[1, 2] | join('-')", '1-2'],
    ["[1, 2] | join(d='-')", '1-2'],
    ["'ab' | join('-')", 'a-b'],
    ["{'a': 1} | join(',')", 'a'],
    ["[1, none] | join(',')", '1,None'],
    ["[{'a': 'x'}, {'a': 'y'}] | join(',', attribute='a')", 'x,y'],
    ["'abc' | max", 'c'],
    ["['b', 'A', 'a'] | max", 'b'],
    ["['b', 'A', 'a'] | min", 'A'],
    ["['b', 'A', 'a'] | max(case_sensitive=true)", 'b'],
    ["[{'a': 2}, {'a': 1}] | max(attribute='a')", "{'a': 2}"],
    ["{'b': 1, 'a': 2} | length", '2'],
    ["'abc' | count", '3'],
    ["'😀x' | length", '2'],
    ["'abc' | list", "['a', 'b', 'c']"],
    ["{'a': 1, 'b': 2} | list", "['a', 'b']"],
    ["[1, 2] | map('string') | list", "['1', '2']"],
    ["['a'] | map('upper') | list", "['A']"],
    ["['a'] | map('replace', 'a', 'b') | list", "['b']"],
    ["[{'a': 1}] | map(attribute='b', default=0) | list", '[0]'],
    ["[{'a': {'c': 3}}] | map(attribute='a.c') | list", '[3]'],
    ["[[1, 2]] | map(attribute='1') | list", '[2]'],
    ["0 | map('string') | list", '[]'],
    ['none | default(3)', 'None'],
    ['none | default(3, true)', '3'],
    ["'' | default('x', true)", 'x'],
    // boolean=false (or falsy): only a missing value takes the default, falsy ones are kept
    ['none | default(3, false)', 'None'],
    ["'' | default('x', false)", ''],
    ['0 | default(5, false)', '0'],
    ['false | default(5, 0)', 'False'],
    ['[] | default(5, boolean=false)', '[]'],
    ['0 | default(5, boolean=true)', '5'],
    ['NOPE | default(5, false)', '5'],
    ['[1] | default', '[1]'],
    ['3.7 | int', '3'],
    ["'3' | int", '3'],
    ["'x' | int", '0'],
    ["'x' | int(7)", '7'],
    ["'3.5' | int", '3'],
    ["'  12 ' | int", '12'],
    ["'1_000' | int", '1000'],
    ["'0x1A' | int(0, 16)", '26'],
    ["'ff' | int(base=16)", '255'],
    ['-12.5 | int', '-12'],
    ['true | int', '1'],
    ['none | int', '0'],
    ['3 | float', '3.0'],
    ["'x' | float", '0.0'],
    ["' 1e3 ' | float", '1000.0'],
    ["'inf' | float", 'inf'],
    ['none | string', 'None'],
    ["3 | string ~ 'x'", '3x'],
    ["[1, 'a'] | string", "[1, 'a']"],
    ["'Hello' | lower", 'hello'],
    ["'Hello' | upper", 'HELLO'],
    ['3 | upper', '3'],
    ['[1, 2] | first', '1'],
    ['[1, 2] | last', '2'],
    ["'abc' | last", 'c'],
    ["{'a': 1} | first", 'a'],
    ['[1, 2.5] | sum', '3.5'],
    ['[] | sum', '0'],
    ['[3, 2.5] | sum(start=1)', '6.5'],
    ['[[1], [2]] | sum(start=[])', '[1, 2]'],
    ["[{'n': 2}, {'n': 3}] | sum(attribute='n')", '5'],
    ['-3 | abs', '3'],
    ['-2.5 | abs', '2.5'],
    ['2.5 | round', '2.0'],
    ['3.5 | round', '4.0'],
    ['0.5 | round', '0.0'],
    ['-2.5 | round', '-2.0'],
    ['2.567 | round(2)', '2.57'],
    ['2.675 | round(2)', '2.67'],
    ['3 | round', '3'],
    ['7 | round(1)', '7'],
    ['1234.5 | round(-2)', '1200.0'],
    ["2.5 | round(0, 'ceil')", '3.0'],
    ["-2.5 | round(0, 'floor')", '-3.0'],
    ["'aXa' | replace('a', 'b')", 'bXb'],
    ["'aXa' | replace('a', 'b', 1)", 'bXa'],
    ["'ab' | replace('', '-')", '-a-b-'],
    ["' a ' | trim", 'a'],
    ["'xxabcxx' | trim('x')", 'abc'],
    ['[3, 1, 2] | sort', '[1, 2, 3]'],
    ['[3, 1, 2] | sort(reverse=true)', '[3, 2, 1]'],
    ["['b', 'A', 'a'] | sort", "['A', 'a', 'b']"],
    ["[{'a': 2}, {'a': 1}] | sort(attribute='a')", "[{'a': 1}, {'a': 2}]"],
    ['[1, 2, 1] | unique | list', '[1, 2]'],
    ["['B', 'a', 'A'] | unique | list", "['B', 'a']"],
    ["{'b': [1, 'x', none, true], 'a': 1.0} | tojson", '{"a": 1.0, "b": [1, "x", null, true]}'],
    ["'é<' | tojson", '"\\u00e9\\u003c"'],
    ["{'a': 1} | tojson(indent=2)", '{\n  "a": 1\n}'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['3 | list', "'int' object is not iterable"],
    ['5 | max', "'int' object is not iterable"],
    ["[1, 'a'] | max", "'>' not supported between instances of 'str' and 'int'"],
    ["N | round(1, 'x')", 'method must be common, ceil or floor'],
    ["[1] | map(attribute='x', y=1) | list", 'unexpected argument'],
    ['3 | length', "object of type 'int' has no len()"],
  ])('%s is an evaluation error', (src, msg) => {
    const err = thrown(() => e(src));
    expect(err).toBeInstanceOf(ExprEvalError);
    expect(err.message).toContain(msg);
  });

  it('empty aggregates are undefined (usable with default)', () => {
    expect(thrown(() => e('[] | max'))).toBeInstanceOf(ExprUndefinedError);
    expect(thrown(() => e('[] | first'))).toBeInstanceOf(ExprUndefinedError);
    expect(e('([] | first) is defined')).toBe('False');
    expect(e("[] | first | default('none')")).toBe('none');
  });
});

describe('filter and test names are checked at compile time', () => {
  it('an unknown filter is a syntax error with a suggestion and offset', () => {
    const err = thrown(() => compileTemplate('x: ${{ [1] | lenght }}')) as ExprSyntaxError;
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toBe("unknown filter 'lenght'; did you mean 'length'?");
    expect(err.offset).toBe('x: ${{ [1] | '.length);
    expect(err.expression).toBe('${{ [1] | lenght }}');
  });

  it('an unknown filter without a close match has no suggestion', () => {
    expect(thrown(() => compileTemplate('${{ 1 | no_such_filter }}')).message).toBe(
      "unknown filter 'no_such_filter'",
    );
  });

  it('an unknown test is a syntax error', () => {
    const err = thrown(() => compileTemplate('${{ 1 is definde }}'));
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toBe("unknown test 'definde'; did you mean 'defined'?");
  });

  it.each([
    ['${{ [1] | length(3) }}', "filter 'length': too many arguments (at most 0)"],
    ["${{ [1] | join(sep='-') }}", "filter 'join': unexpected keyword argument 'sep'"],
    ["${{ [1] | join('-', d=',') }}", "filter 'join': got multiple values for argument 'd'"],
    ["${{ 'a' | replace('a') }}", "filter 'replace' needs 2 argument(s): old, new"],
    ["${{ [1] | map('nope') }}", "unknown filter 'nope' in map()"],
    ['${{ 1 is divisibleby }}', "test 'divisibleby' takes 1 argument(s), got 0"],
    ['${{ 1 is number(2) }}', "test 'number' takes 0 argument(s), got 1"],
  ])('%s: %s', (src, msg) => {
    const err = thrown(() => compileTemplate(src));
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toBe(msg);
  });
});

describe('tests (is …)', () => {
  it.each([
    ['TP is defined', 'True'],
    ['NOPE is defined', 'False'],
    ['none is none', 'True'],
    ['N is not none', 'True'],
    ['1 is number', 'True'],
    ['2.5 is number', 'True'],
    ['true is number', 'True'],
    ["'1' is number", 'False'],
    ["'a' is string", 'True'],
    ['1 is string', 'False'],
    ['true is boolean', 'True'],
    ['true is integer', 'False'],
    ['1 is integer', 'True'],
    ['1.0 is float', 'True'],
    ['{} is mapping', 'True'],
    ["'a' is sequence", 'True'],
    ['[1] is iterable', 'True'],
    ['3 is odd', 'True'],
    ['3.0 is even', 'False'],
    ['2.5 is odd', 'False'],
    ['N is even', 'True'],
    ['N is divisibleby 2', 'True'],
    ['N is divisibleby(3)', 'False'],
    ['N is eq 4', 'True'],
    ['N is ne 3', 'True'],
    ['N is gt 3', 'True'],
    ['N is lt(3)', 'False'],
    ['N is in [4]', 'True'],
    ['N is not in [4]', 'False'],
    ['1 is divisibleby 2 is string', 'False'],
    ['true is true', 'True'],
    ['0 is false', 'False'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('chaining a test directly after a test name is rejected (Jinja2)', () => {
    expect(thrown(() => compileTemplate('${{ 1 is number is string }}'))).toBeInstanceOf(ExprSyntaxError);
  });
});
