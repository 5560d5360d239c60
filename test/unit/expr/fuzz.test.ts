import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ExprEvalError,
  ExprSyntaxError,
  ExprUndefinedError,
  PyFloat,
  compileTemplate,
  evaluateTemplate,
  floatRepr,
  renderTemplate,
  renderValue,
  type Scope,
  type Value,
} from '../../../src/config/expr/index.js';
import { sampleScope } from './helpers.js';

const isExprError = (err: unknown): boolean =>
  err instanceof ExprSyntaxError || err instanceof ExprUndefinedError || err instanceof ExprEvalError;

/** Compiles, renders and evaluates; any exception must be one of the engine's own errors. */
function runChecked(src: string, scope: Scope): void {
  try {
    const t = compileTemplate(src);
    renderTemplate(t, scope);
    renderValue(evaluateTemplate(t, scope));
  } catch (err) {
    if (!isExprError(err)) throw err;
  }
}

const TOKENS = [
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  "'",
  '"',
  '\\',
  '.',
  '|',
  '~',
  '+',
  '-',
  '*',
  '**',
  '/',
  '//',
  '%',
  ' ',
  ',',
  ':',
  '=',
  '==',
  '!=',
  '<',
  '>=',
  '!',
  'x',
  'N',
  'X',
  '0',
  '1',
  '2.5',
  '1e3',
  'e',
  '_',
  'is',
  'not',
  'in',
  'if',
  'else',
  'and',
  'or',
  'defined',
  'none',
  'length',
  'max',
  'join',
  'map',
  'attribute',
  'default',
  'round',
  'format',
  'range',
  'True',
  'variables',
  'task',
  'w',
  'gpus',
  'C',
  'domain',
  '${{',
  '}}',
  '-}}',
  '%s',
  '%d',
  '\n',
];

describe('property: arbitrary input only ever raises the engine errors', () => {
  const scope = sampleScope();

  it('token soup inside ${{ }}', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { maxLength: 30 }), (toks) => {
        runChecked('${{ ' + toks.join('') + ' }}', scope);
        runChecked('a ${{' + toks.join(' ') + '}} b', scope);
      }),
      { numRuns: 1000 },
    );
  });

  it('arbitrary unicode strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        runChecked('${{ ' + s + ' }}', scope);
        runChecked(s, scope);
      }),
      { numRuns: 500 },
    );
  });

  const expr = fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(
        '0',
        '1',
        '-1',
        '2.5',
        '1e3',
        "'a'",
        "'4'",
        "''",
        'none',
        'true',
        '[1, 2]',
        '[]',
        '(1,)',
        "{'a': 1}",
        'N',
        'X',
        'C',
        'variables.C.domain',
        'task.w',
        'NOPE',
      ),
      fc
        .tuple(
          tie('e'),
          fc.constantFrom('+', '-', '*', '/', '//', '%', '**', '~', '==', '<', 'in', 'and', 'or'),
          tie('e'),
        )
        .map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc
        .tuple(
          tie('e'),
          fc.constantFrom(
            'length',
            'list',
            'max',
            'min',
            'join',
            'first',
            'sum',
            'int',
            'float',
            'string',
            'round',
            'sort',
            'unique',
            'tojson',
            'abs',
            'default(0)',
            "map('string')",
            'trim',
          ),
        )
        .map(([a, f]) => `(${a} | ${f})`),
      fc
        .tuple(
          tie('e'),
          fc.constantFrom('defined', 'none', 'number', 'string', 'even', 'divisibleby 3', 'in [1]'),
        )
        .map(([a, t]) => `(${a} is ${t})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([a, b, c]) => `(${a} if ${b} else ${c})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `${a}[${b}]`),
      tie('e').map((a) => `-${a}`),
      tie('e').map((a) => `range(${a})`),
    ),
  }));

  it('well-formed random expressions evaluate or raise a typed error', () => {
    fc.assert(
      fc.property(expr.e, (src) => {
        const t = compileTemplate('${{ ' + src + ' }}');
        try {
          renderTemplate(t, scope);
        } catch (err) {
          expect(isExprError(err)).toBe(true);
          expect(err).not.toBeInstanceOf(ExprSyntaxError);
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe('property: the sandbox never leaks JS internals', () => {
  const DANGER = [
    'constructor',
    '__proto__',
    'prototype',
    'process',
    'globalThis',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__class__',
    '__globals__',
    'call',
    'apply',
    'bind',
    'length',
    'name',
  ];
  const scope: Scope = { ...sampleScope(), obj: { inner: { k: 1 } }, list: [{ a: 1 }], toString: 'data' };

  const root = fc.constantFrom(
    ...DANGER,
    'obj',
    'list',
    'variables',
    'task',
    "''",
    '[]',
    '{}',
    '1',
    'range(2)',
  );
  const step = fc.oneof(
    fc.constantFrom(...DANGER, 'inner', 'k', 'a').map((n) => `.${n}`),
    fc.constantFrom(...DANGER, 'inner', 'k').map((n) => `['${n}']`),
    fc.constantFrom(
      '[0]',
      '[-1]',
      ' | first',
      ' | list',
      ' | default(obj)',
      ' | map(attribute="constructor") | list',
    ),
  );

  function assertPlainData(value: unknown, depth = 0): void {
    expect(typeof value).not.toBe('function');
    expect(value).not.toBe(Object.prototype);
    expect(value).not.toBe(Function.prototype);
    expect(value).not.toBe(Array.prototype);
    expect(value).not.toBe(globalThis);
    if (value !== null && typeof value === 'object' && depth < 20) {
      if (Array.isArray(value)) value.forEach((x) => assertPlainData(x, depth + 1));
      else if (!(value instanceof PyFloat)) {
        const proto = Object.getPrototypeOf(value) as unknown;
        expect(proto === Object.prototype || proto === null).toBe(true);
        for (const k of Object.keys(value)) assertPlainData((value as Record<string, unknown>)[k], depth + 1);
      }
    }
  }

  it('attribute/subscript chains over dangerous names yield only plain data', () => {
    fc.assert(
      fc.property(root, fc.array(step, { maxLength: 6 }), (r, steps) => {
        const src = '${{ ' + r + steps.join('') + ' }}';
        let value: Value | undefined;
        try {
          value = evaluateTemplate(compileTemplate(src), scope);
        } catch (err) {
          expect(isExprError(err)).toBe(true);
          return;
        }
        assertPlainData(value);
        const rescued = steps.some((st) => st.includes('default'));
        if ((r === 'process' || r === 'globalThis') && !rescued) throw new Error(`${src} resolved`);
      }),
      { numRuns: 1500 },
    );
  });

  it('process and globalThis are undefined, whatever follows', () => {
    for (const src of ['process', 'globalThis', 'process.env', 'globalThis.process', "globalThis['eval']"]) {
      expect(() => evaluateTemplate(compileTemplate('${{ ' + src + ' }}'), scope)).toThrow(
        ExprUndefinedError,
      );
    }
  });
});

describe('property: integer arithmetic and rendering match Python', () => {
  const pyFloorDiv = (a: number, b: number): number => Math.floor(a / b);
  const pyMod = (a: number, b: number): number => a - b * Math.floor(a / b);
  const int = fc.integer({ min: -100_000, max: 100_000 });
  const nonZero = int.filter((b) => b !== 0);

  it('// % + - * agree with a Math.floor reference', () => {
    const t = compileTemplate('${{ a // b }} ${{ a % b }} ${{ a + b }} ${{ a - b }} ${{ a * b }} ${{ -a }}');
    fc.assert(
      fc.property(int, nonZero, (a, b) => {
        const expected = [pyFloorDiv(a, b), pyMod(a, b), a + b, a - b, a * b, -a].map((n) =>
          String(n === 0 ? 0 : n),
        );
        expect(renderTemplate(t, { a, b })).toBe(expected.join(' '));
      }),
      { numRuns: 1000 },
    );
  });

  it('true division renders as a Python float and ** of small ints is exact', () => {
    const t = compileTemplate('${{ a / b }}|${{ a ** c }}');
    fc.assert(
      fc.property(int, nonZero, fc.integer({ min: 0, max: 3 }), (a, b, c) => {
        const [div, pow] = renderTemplate(t, { a, b, c }).split('|');
        expect(Number(div)).toBe(a / b);
        expect(div).toMatch(/\.|e|inf|nan/);
        expect(pow).toBe(String(a ** c));
      }),
      { numRuns: 500 },
    );
  });

  it('rendered ints and floats read back to the same number', () => {
    fc.assert(
      fc.property(fc.oneof(int, fc.double({ noNaN: true, noDefaultInfinity: true })), (x) => {
        const s = renderValue(Number.isInteger(x) && !Object.is(x, -0) ? x : new PyFloat(x));
        expect(Number(s)).toBe(x);
        if (!Number.isInteger(x) || Object.is(x, -0)) expect(s).toBe(floatRepr(x));
        expect(renderTemplate(compileTemplate('${{ v }}'), { v: x })).toBe(renderValue(x));
      }),
      { numRuns: 500 },
    );
  });
});
