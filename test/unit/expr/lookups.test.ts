import { describe, expect, it } from 'vitest';
import {
  DomainValue,
  ExprEvalError,
  ExprSyntaxError,
  ExprUndefinedError,
  compileTemplate,
  renderTemplate,
} from '../../../src/config/expr/index.js';
import { e, r, thrown, v } from './helpers.js';

describe('names, attributes and subscripts (spec 3.2, 3.3)', () => {
  it.each([
    ['variables.X', '4'],
    ['X', '4'],
    ["variables['X']", '4'],
    ['backends.box.nodes[0].ip_address', '127.0.0.1'],
    ['backends.box.nodes.1.name', 'localhost-1'],
    ["backends['box']['nodes'][2]['name']", 'localhost-2'],
    ['backends.box.nodes[-1].name', 'localhost-2'],
    ['task.w[1].gpus', '[1, 2]'],
    ['task.w.1.gpus', '[1, 2]'],
    ['task.w[0].nodes', "[{'name': 'localhost', 'ip_address': '127.0.0.1', 'index': 0, 'num_gpus': None}]"],
    ["workflow.name ~ '-x'", 'expressions-x'],
    ['artifacts.RUN_CONFIG.path', '/tmp/run.json'],
    ["'abc'[1]", 'b'],
    ["'abc'[-1]", 'c'],
    ['X[0]', '4'],
    ["'😀x'[1]", 'x'],
    ['[1, 2][true]', '2'],
    ["{'a': 1}.a", '1'],
    ['(1, 2)[0]', '1'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['[1, 2, 3][::-1]', '[3, 2, 1]'],
    ["'abc'[1:]", 'bc'],
    ['[1, 2, 3, 4, 5][1:4:2]', '[2, 4]'],
    ['[1, 2, 3, 4, 5][-2:]', '[4, 5]'],
    ['[1, 2, 3, 4, 5][:-2]', '[1, 2, 3]'],
    ['[1, 2, 3, 4, 5][4:1:-1]', '[5, 4, 3]'],
    ["'hello'[::-2]", 'olh'],
    ['(1, 2, 3)[1:]', '(2, 3)'],
    ['[1, 2][5:]', '[]'],
  ])('slice %s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('rejects a zero slice step', () => {
    expect(thrown(() => e('[1, 2][::0]'))).toBeInstanceOf(ExprEvalError);
  });
});

describe('variables with a domain (v0.3)', () => {
  it('behave as their value, except for .domain', () => {
    expect(e('variables.C')).toBe('8');
    expect(e('variables.C * 2')).toBe('16');
    expect(e('variables.C == 8')).toBe('True');
    expect(e('variables.C.domain')).toBe('[4, 8, 16]');
    expect(e("variables.C['domain']")).toBe('[4, 8, 16]');
    expect(e('variables.C.domain | max')).toBe('16');
    expect(e('variables.C.domain | length')).toBe('3');
    expect(v('variables.C')).toBe(8);
  });

  it('a variable without a domain has no .domain', () => {
    const scope = { variables: { D: new DomainValue('x', null) } };
    expect(thrown(() => e('variables.D.domain', scope))).toBeInstanceOf(ExprUndefinedError);
    expect(e('variables.D.domain is defined', scope)).toBe('False');
  });

  it('domain values nested in a result are unwrapped by evaluateTemplate', () => {
    expect(v('[variables.C, 1]')).toEqual([8, 1]);
  });
});

describe('undefined references (spec 3.7)', () => {
  it.each([
    ['variables.NOPE', 'variables.NOPE', 'NOPE'],
    ['NOPE', 'NOPE', 'NOPE'],
    ['variables.NOPE.x', 'variables.NOPE', 'NOPE'],
    ['task.w[5].gpus', 'task.w[5]', '5'],
    ["variables['NOPE']", "variables['NOPE']", 'NOPE'],
    ['backends.box.nodes[0].hostname', 'backends.box.nodes[0].hostname', 'hostname'],
    ['1 + NOPE', 'NOPE', 'NOPE'],
    ['NOPE and 1', 'NOPE', 'NOPE'],
    ['not NOPE', 'NOPE', 'NOPE'],
    ['NOPE == 1', 'NOPE', 'NOPE'],
    ['N.x', 'N.x', 'x'],
  ])('${{ %s }} names %s', (src, expression, name) => {
    const err = thrown(() => e(src)) as ExprUndefinedError;
    expect(err).toBeInstanceOf(ExprUndefinedError);
    expect(err.expression).toBe(expression);
    expect(err.name_).toBe(name);
    expect(err.message).toContain(expression);
  });

  it('reports the failing part of a mixed string', () => {
    const err = thrown(() => r('a ${{ X }} b ${{ variables.NOPE }}')) as ExprUndefinedError;
    expect(err.expression).toBe('variables.NOPE');
  });

  it('is defined / default never throw for a missing last step', () => {
    expect(e('NOPE is defined')).toBe('False');
    expect(e('NOPE is undefined')).toBe('True');
    expect(e('variables.NOPE is defined')).toBe('False');
    expect(e('variables.X is defined')).toBe('True');
    expect(e('task.w[9] is defined')).toBe('False');
    expect(e("N['x'] is defined")).toBe('False');
    expect(e('NOPE is not defined')).toBe('True');
    expect(e('NOPE is none')).toBe('False');
    expect(e('NOPE is string')).toBe('False');
    expect(e('NOPE | default(3)')).toBe('3');
    expect(e('variables.NOPE | default(3)')).toBe('3');
    expect(e('NOPE | d(3)')).toBe('3');
  });

  it('but a missing intermediate step still throws (Jinja2)', () => {
    expect(thrown(() => e('variables.NOPE.b is defined'))).toBeInstanceOf(ExprUndefinedError);
    expect(thrown(() => e('variables.NOPE.x | default(3)'))).toBeInstanceOf(ExprUndefinedError);
    expect(thrown(() => e('NOPE is even'))).toBeInstanceOf(ExprUndefinedError);
  });

  it('an if-expression without else renders empty but is undefined as a value', () => {
    expect(r("a${{ 'x' if false }}b")).toBe('ab');
    expect(e("('x' if false) ~ 'a'")).toBe('a');
    expect(e("('x' if false) is defined")).toBe('False');
    expect(e("'x' if 1")).toBe('x');
    expect(thrown(() => e("('x' if false) + 1"))).toBeInstanceOf(ExprUndefinedError);
  });
});

describe('sandbox', () => {
  it.each([
    'constructor',
    '__proto__',
    'prototype',
    '__class__',
    '__dict__',
    'toString',
    'valueOf',
    'hasOwnProperty',
  ])('attribute %s never resolves', (name) => {
    for (const src of [`variables.${name}`, `variables['${name}']`, `X.${name}`, `[1].${name}`, `${name}`]) {
      expect(thrown(() => e(src))).toBeInstanceOf(ExprUndefinedError);
    }
  });

  it('ignores even own data properties with internal names', () => {
    const scope = JSON.parse('{"d": {"__proto__": 1, "constructor": 2, "ok": 3}}');
    expect(e('d.ok', scope)).toBe('3');
    expect(thrown(() => e('d.constructor', scope))).toBeInstanceOf(ExprUndefinedError);
    expect(thrown(() => e("d['__proto__']", scope))).toBeInstanceOf(ExprUndefinedError);
  });

  it('does not see the global environment or the prototype chain of the scope', () => {
    for (const name of ['process', 'globalThis', 'require', 'Object', 'eval', 'Function']) {
      expect(thrown(() => e(name))).toBeInstanceOf(ExprUndefinedError);
    }
    const scope = Object.create({ inherited: 1 }) as Record<string, never>;
    expect(thrown(() => e('inherited', scope))).toBeInstanceOf(ExprUndefinedError);
    expect(e('own', Object.assign(Object.create(null), { own: 1 }))).toBe('1');
  });

  it('treats non-data properties (functions, undefined) as missing', () => {
    const scope = { f: (() => 1) as never, u: undefined as never, d: { g: (() => 2) as never, k: 1 } };
    expect(thrown(() => e('f', scope))).toBeInstanceOf(ExprUndefinedError);
    expect(thrown(() => e('u', scope))).toBeInstanceOf(ExprUndefinedError);
    expect(e('d', scope)).toBe("{'k': 1}");
  });

  it('method calls and arbitrary calls are rejected at compile time', () => {
    for (const src of ["${{ 'a,b'.split(',') }}", '${{ foo() }}', '${{ X.upper() }}']) {
      const err = thrown(() => compileTemplate(src));
      expect(err).toBeInstanceOf(ExprSyntaxError);
      expect(err.message).toMatch(/not supported; the only function available is range\(\)/);
    }
  });

  it('range() is the only callable and is size-limited', () => {
    expect(e('range(0, 2) | list')).toBe('[0, 1]');
    expect(e('range(3)')).toBe('[0, 1, 2]');
    expect(e('range(1, 10, 3) | list')).toBe('[1, 4, 7]');
    expect(e('range(5, 0, -2) | list')).toBe('[5, 3, 1]');
    expect(e('range(0) | list')).toBe('[]');
    expect(thrown(() => e('range(0, 3, 0)')).message).toBe('range() arg 3 must not be zero');
    expect(thrown(() => e('range(200000)'))).toBeInstanceOf(ExprEvalError);
    expect(thrown(() => e('range(1.5)'))).toBeInstanceOf(ExprEvalError);
    expect(thrown(() => compileTemplate('${{ range(stop=2) }}'))).toBeInstanceOf(ExprSyntaxError);
  });

  it('dict literal keys must be strings', () => {
    expect(thrown(() => e('{1: 2}'))).toBeInstanceOf(ExprEvalError);
  });

  it('the same compiled template renders different scopes independently', () => {
    const t = compileTemplate('${{ a }}-${{ [a] }}');
    const out1 = renderTemplate(t, { a: 1 });
    const out2 = renderTemplate(t, { a: 'x' });
    expect([out1, out2]).toEqual(['1-[1]', "x-['x']"]);
  });
});
