/**
 * The tokenizer through whole templates: spacing, names, number literals, operators, strings and
 * where a region ends. Values are what Jinja2 3.1.6 renders for the same `{{ … }}`.
 */
import { describe, expect, it } from 'vitest';
import { type Scope } from '../../../src/config/expr/index.js';
import { e as render, r, syntaxError } from './helpers.js';

const scope = (): Scope => ({
  N: 4,
  TP: 4,
  zeta_9: 'z9',
  Z_: 'Z',
  _z: 'uz',
  é: 'e',
  Ωmega: 1,
  aéb: 2,
  L: [[5, 6]],
});
const e = (src: string): string => render(src, scope());

describe('spacing between tokens', () => {
  it.each([
    ['N\t+\nTP'],
    ['N\r+\vTP'],
    ['N\f+ TP'],
    ['N\x1c+\x1fTP'],
    ['N\x85+\u00a0TP'],
    ['N\u2028+\u3000TP'],
    ['N+TP'],
  ])('%j is N + TP', (src) => {
    expect(e(src)).toBe('8');
  });

  it.each([
    ['N\b+TP', 'unexpected character "\\b"', 8],
    ['N\x0e+TP', 'unexpected character "\\u000e"', 8],
    // U+FEFF is a space to JavaScript, not to Python
    ['N\ufeff+TP', 'unexpected character "\ufeff"', 8],
  ])('%j is refused: %s', (src, msg, at) => {
    expect(syntaxError('ab ${{ ' + src + ' }}')).toMatchObject({ message: msg, offset: at });
  });
});

describe('names, numbers and operators', () => {
  it.each([
    ['zeta_9', 'z9'],
    ['Z_', 'Z'],
    ['_z', 'uz'],
    ['é', 'e'],
    ['Ωmega + 1', '2'],
    ['aéb', '2'],
    ['0b1_0', '2'],
    ['0B11', '3'],
    ['0o17', '15'],
    ['0O17', '15'],
    ['0x1f', '31'],
    ['0X1F', '31'],
    ['0x_1f', '31'],
    ['0x1FFFFFFFFFFFFF', '9007199254740991'],
    ['1_000', '1000'],
    ['0_0', '0'],
    ['1.5e3', '1500.0'],
    ['1e3', '1000.0'],
    ['1E-2', '0.01'],
    ['1.5_0', '1.5'],
    ['L.0', '[5, 6]'],
    ['L.0.1', '6'],
    ['L[0][1]', '6'],
    ['7//2', '3'],
    ['7/2', '3.5'],
    ['2**3', '8'],
    ['2*3', '6'],
    ['1==1', 'True'],
    ['1!=2', 'True'],
    ['1<=1', 'True'],
    ['2>=3', 'False'],
    ['1<2', 'True'],
    ['2>1', 'True'],
    ['7%3', '1'],
    ['N~TP', '44'],
  ])('%s → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it.each([
    ['007', "unexpected '7'; expected an operator or '}}'"],
    ['5.', "expected an attribute name or number after '.', got '}}'"],
    ['0x20000000000001', 'integer 0x20000000000001 is beyond ±2^53'],
  ])('%s is refused: %s', (src, msg) => {
    expect(syntaxError('${{ ' + src + ' }}').message).toContain(msg);
  });
});

describe('string literals', () => {
  it.each([
    ["'a\rb' | length", '3'],
    ["'a\r\nb' | length", '3'],
    ["'a\nb' | length", '3'],
    ["'a\r\rb' | length", '4'],
    ["'\\\\' | length", '1'],
    ["'a\\\\' | length", '2'],
    ['"it\'s"', "it's"],
    ['\'say "hi"\'', 'say "hi"'],
    ["'a\\'b'", "a'b"],
    ['"}}"', '}}'],
  ])('%j → %s', (src, out) => {
    expect(e(src)).toBe(out);
  });

  it('a line end inside a literal reads as \\n whichever way the file ends its lines', () => {
    expect(e("'a\r\nb'")).toBe('a\nb');
    expect(e("'a\rb'")).toBe('a\nb');
  });
});

describe('where a region ends, and what an error shows of it', () => {
  it.each([
    ['${{- N -}}', '4'],
    [' ${{- N }} ', '4 '],
    ['a ${{ N -}} b', 'a 4b'],
    ['a ${{ 1 }}${{ 2 }}', 'a 12'],
    ['a ${{ N }} }} b', 'a 4 }} b'],
    ['${{ {"a": 1}["a"] }}', '1'],
  ])('%j → %j', (src, out) => {
    expect(r(src, scope())).toBe(out);
  });

  it.each([
    ['a ${{ N \b }} b ${{ x }}', 'unexpected character "\\b"', 8, '${{ N \b }}'],
    ['a ${{ N \b', 'unexpected character "\\b"', 8, '${{ N \b'],
    ['x ${{ "ab', 'unterminated string literal', 6, '${{ "ab'],
    ['x ${{ (1, 2 }}', "unexpected '}', expected ')'", 12, '${{ (1, 2 }}'],
    ['x ${{ [1', "unclosed '['", 6, '${{ [1'],
    ['x ${{ N', "missing '}}' to close '${{'", 2, '${{ N'],
  ])('%j: %s at %d, showing %j', (src, msg, at, shown) => {
    expect(syntaxError(src)).toEqual({ message: msg, offset: at, expression: shown });
  });
});
