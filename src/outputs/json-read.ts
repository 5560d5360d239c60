/**
 * Reads JSON that sflow wrote (results.json, result.json) back without losing the Python look of
 * its floats: a number written with a fraction or an exponent (`40.0`, `1e-07`), and Python's
 * `NaN` / `Infinity` / `-Infinity`, come back as PyFloat, so writing the value again gives the
 * same text. Everything else is what JSON.parse gives.
 */
import { PyFloat } from './json-write.js';

export function parseJsonKeepFloats(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`JSON: ${what} at offset ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') return (i++, out);
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail("expected ':'");
        Object.defineProperty(out, k, {
          value: value(),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return (i++, out);
        else fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') return (i++, out);
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return (i++, out);
        else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    for (const [word, v] of WORDS) if (text.startsWith(word, i)) return ((i += word.length), v);
    const m = NUMBER.exec(text.slice(i, i + 400));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    const n = Number(m[0]);
    return /[.eE]/.test(m[0]) ? new PyFloat(n) : n;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const out = value();
  ws();
  if (i < text.length) fail('trailing text');
  return out;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const WORDS: Array<[string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
  ['NaN', new PyFloat(NaN)],
  ['Infinity', new PyFloat(Infinity)],
  ['-Infinity', new PyFloat(-Infinity)],
];
