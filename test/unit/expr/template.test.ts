import { describe, expect, it } from 'vitest';
import {
  ExprSyntaxError,
  PyFloat,
  compileTemplate,
  evaluateTemplate,
  hasExpression,
  renderTemplate,
  substituteTemplate,
} from '../../../src/config/expr/index.js';
import { r, sampleScope, thrown } from './helpers.js';

describe('detection and literal text (spec 3.1)', () => {
  it('detects the three characters ${{', () => {
    expect(hasExpression('a ${{ x }}')).toBe(true);
    expect(hasExpression('${VAR} $VAR {{ x }}')).toBe(false);
    expect(hasExpression('$ {{')).toBe(false);
  });

  it('passes strings without ${{ through unchanged, newlines included', () => {
    for (const s of ['plain\n', 'echo ${HOME} $USER\r\n', '{% if %}{# c #}', '']) {
      expect(r(s)).toBe(s);
      expect(compileTemplate(s).isSingleExpression).toBe(false);
    }
  });

  it('treats {% and {# as literal text next to an expression (documented deviation)', () => {
    expect(r('n=${#arr[@]} {% raw %} ${{ N }}')).toBe('n=${#arr[@]} {% raw %} 4');
  });

  it('concatenates several expressions with text; whitespace inside is insignificant', () => {
    expect(r('a-${{N}}-${{   X   }}-${{\n  TP\n}}')).toBe('a-4-4-4');
    expect(r('$${{ N }}')).toBe('$4');
  });

  it('finds the closing }} after nested braces and inside strings', () => {
    expect(r("${{ {'a': {'b': 1}} }}")).toBe("{'a': {'b': 1}}");
    expect(r("${{ {'a': 1}}}")).toBe("{'a': 1}");
    expect(r("${{ '}}' }}x")).toBe('}}x');
  });
});

describe('Jinja2 rendering quirks (spec 3.6)', () => {
  it('drops exactly one trailing newline of an expression-bearing string', () => {
    expect(r("${{ 'x' }}\n")).toBe('x');
    expect(r("${{ 'x' }}\n\n")).toBe('x\n');
    expect(r('line ${{ N }}\nnext\n')).toBe('line 4\nnext');
    expect(r("${{ 'x\\n' }}")).toBe('x\n');
    expect(r('a\r\nb ${{ 1 }}\r\n')).toBe('a\nb 1');
  });

  it('supports whitespace control markers ${{- and -}}', () => {
    expect(r('a  ${{- 1 }}')).toBe('a1');
    expect(r('${{ 1 -}}  \n b')).toBe('1b');
    expect(r('a ${{ -1 }}')).toBe('a -1');
  });
});

describe('evaluateTemplate and isSingleExpression', () => {
  it('gives the native value of a string that is exactly one expression', () => {
    const s = sampleScope();
    expect(evaluateTemplate(compileTemplate('${{ 1 + 2 }}'), s)).toBe(3);
    expect(evaluateTemplate(compileTemplate('${{ 5 / 2 }}'), s)).toBe(2.5);
    expect(evaluateTemplate(compileTemplate('${{ 4 / 2 }}'), s)).toEqual(new PyFloat(2));
    expect(evaluateTemplate(compileTemplate('${{ true }}'), s)).toBe(true);
    expect(evaluateTemplate(compileTemplate('${{ task.w[1].gpus }}'), s)).toEqual([1, 2]);
    expect(evaluateTemplate(compileTemplate("${{ 'x' if false }}"), s)).toBe('');
  });

  it('gives the rendered string otherwise', () => {
    const s = sampleScope();
    expect(evaluateTemplate(compileTemplate(' ${{ 1 + 2 }}'), s)).toBe(' 3');
    expect(evaluateTemplate(compileTemplate('${{ 1 }}${{ 2 }}'), s)).toBe('12');
    expect(evaluateTemplate(compileTemplate('${{ 1 }}\n'), s)).toBe('1');
    expect(compileTemplate('${{ 1 }}').isSingleExpression).toBe(true);
    expect(compileTemplate('${{ 1 }}\n').isSingleExpression).toBe(false);
    expect(compileTemplate('x${{ 1 }}').isSingleExpression).toBe(false);
  });

  it('renders always as a string (spec 3.5)', () => {
    expect(renderTemplate(compileTemplate('${{ 1 + 2 }}'), {})).toBe('3');
  });
});

describe('references()', () => {
  it('lists every dotted path rooted at a free name', () => {
    const t = compileTemplate(
      "${{ variables.X }} ${{ X + task.w[1].gpus[0] }} ${{ variables['Y'] | default(Z) }}",
    );
    expect(t.references()).toEqual([
      ['variables', 'X'],
      ['X'],
      ['task', 'w', 1, 'gpus', 0],
      ['variables', 'Y'],
      ['Z'],
    ]);
  });

  it('stops at computed subscripts, skips the range callee, dedupes', () => {
    const t = compileTemplate(
      '${{ a[b].c }} ${{ range(n) }} ${{ b }} ${{ (a | list).x }} ${{ variables.C.domain }}',
    );
    expect(t.references()).toEqual([['a'], ['b'], ['n'], ['variables', 'C', 'domain']]);
  });

  it('is empty for literal strings and per-part on expressions', () => {
    expect(compileTemplate('no refs').references()).toEqual([]);
    const t = compileTemplate('${{ A }}-${{ B.c }}');
    expect(t.expressions.map((p) => p.references)).toEqual([[['A']], [['B', 'c']]]);
    expect(t.expressions.map((p) => [p.text, p.raw, p.start, p.end])).toEqual([
      ['A', '${{ A }}', 0, 8],
      ['B.c', '${{ B.c }}', 9, 19],
    ]);
  });
});

describe('substituteTemplate (compose --resolve)', () => {
  it('replaces resolvable parts textually and keeps the others as written', () => {
    const t = compileTemplate('port=${{ variables.P }} host=${{ backends.box.nodes[0].ip_address }}\n');
    const out = substituteTemplate(t, (part) =>
      part.references.every((p) => p[0] === 'variables')
        ? String(part.evaluate({ variables: { P: 8 } }))
        : undefined,
    );
    expect(out).toBe('port=8 host=${{ backends.box.nodes[0].ip_address }}\n');
  });
});

describe('syntax errors carry an offset into the source', () => {
  it.each([
    ['x ${{ 1 + }}', "expected an expression after '+'", 'x ${{ 1 + '.length],
    ['${{ }}', "empty expression: expected an expression inside '${{ }}'", 4],
    ['ab ${{ 1', "missing '}}' to close '${{'", 3],
    ["${{ 'abc }}", 'unterminated string literal', 4],
    ['${{ 1 2 }}', "unexpected '2'; expected an operator or '}}'", 6],
    ['${{ (1 }}', "unexpected '}', expected ')'", 7],
    ['${{ (1', "unclosed '('", 4],
    ['${{ 1 ] }}', "unexpected ']'", 6],
    ['${{ [1 } }}', "unexpected '}', expected ']'", 7],
    ['${{ 1 } }}', "unexpected '}'", 6],
    ['${{ a ! b }}', 'unexpected character "!"', 6],
    ['${{ 1. }}', "expected an attribute name or number after '.', got '}}'", 7],
    ['${{ x | }}', "expected a filter name after '|', got '}}'", 8],
    ['${{ x is }}', "expected a test name after 'is', got '}}'", 9],
    ['${{ f(a=1, 2) }}', 'positional argument follows keyword argument', 11],
    ['${{ 007 }}', "unexpected '7'; expected an operator or '}}'", 6],
    ['${{ if }}', "expected an expression, got keyword 'if'", 4],
    ["${{ 'a' if 1 else }}", "expected an expression after 'else'", 18],
    ['${{ a[1, 2] }}', 'tuple subscripts are not supported', 7],
  ])('%j → %s', (src, msg, offset) => {
    const err = thrown(() => compileTemplate(src)) as ExprSyntaxError;
    expect(err).toBeInstanceOf(ExprSyntaxError);
    expect(err.message).toBe(msg);
    expect(err.offset).toBe(offset);
  });

  it('names the failing part of a multi-part string', () => {
    const err = thrown(() => compileTemplate('${{ ok }} and ${{ 1 + }} then')) as ExprSyntaxError;
    expect(err.expression).toBe('${{ 1 + }}');
  });

  it('caps nesting depth with a clear error instead of overflowing the stack', () => {
    for (const src of [
      '('.repeat(5000) + '1' + ')'.repeat(5000),
      '-'.repeat(5000) + '1',
      'not '.repeat(3000) + '1',
      'a' + '.b'.repeat(5000),
      '1' + ' + 1'.repeat(5000),
      '['.repeat(3000) + ']'.repeat(3000),
    ]) {
      const err = thrown(() => compileTemplate('${{ ' + src + ' }}'));
      expect(err).toBeInstanceOf(ExprSyntaxError);
      expect(err.message).toBe('expression nested too deeply');
    }
    expect(r('${{ ' + '('.repeat(150) + '1' + ')'.repeat(150) + ' }}')).toBe('1');
  });
});

describe('example 03 (spec examples/03_expressions.yaml)', () => {
  it('renders every script line as the example expects', () => {
    const lines: [string, string][] = [
      [
        'arith: ${{ 3 + 4 }} ${{ 5 - 2 }} ${{ 2 * 5 }} ${{ 5 / 2 }} ${{ 5 // 2 }} ${{ 7 % 2 }}',
        'arith: 7 3 10 2.5 2 1',
      ],
      ['minmax: ${{ [TP, PP, 8] | max }} ${{ [TP, PP, 8] | min }}', 'minmax: 8 1'],
      [
        "nodes: ${{ backends.box.nodes | map(attribute='name') | join(',') }} count=${{ backends.box.nodes | length }}",
        'nodes: localhost,localhost-1,localhost-2 count=3',
      ],
      [
        "cond: ${{ 'big' if WORKERS > 1 else 'small' }} port=${{ 8180 if variables.WORKERS > 1 else 8000 }}",
        'cond: big port=8180',
      ],
      [
        "concat: ${{ workflow.name ~ '-on-' ~ backends.box.nodes[1].name }}",
        'concat: expressions-on-localhost-1',
      ],
      ['defined: ${{ TP is defined }} ${{ NOPE is defined }}', 'defined: True False'],
      ['chain: ${{ GPUS_TOTAL }} ${{ WORKERS }}', 'chain: 16 2'],
    ];
    for (const [src, out] of lines) expect(r(src)).toBe(out);
    expect(r('${{ [variables.GPUS_TOTAL // variables.GPUS_PER_WORKER, 1] | max }}')).toBe('2');
    expect(r('${{ TP * PP * 4 }}')).toBe('16');
  });
});
