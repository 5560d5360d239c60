/**
 * Tokenizer for one `${{ … }}` region, following Jinja2's lexer rules: numbers (with `_`, hex/oct/bin,
 * `1e3` is a float), quoted strings with Python escapes, names, operators. The region ends at the
 * first `}}` (or `-}}`, whitespace control) outside brackets.
 */
import { ExprSyntaxError } from './errors.js';
import { PY_WS } from './values.js';

export type TokType = 'name' | 'int' | 'float' | 'str' | 'op' | 'end';

/** A token: a number's value, or an operator's text, a name, a decoded string. */
export type Token = { start: number; end: number } & (
  { type: 'int' | 'float'; value: number } | { type: Exclude<TokType, 'int' | 'float'>; value: string }
);

export interface Region {
  tokens: Token[];
  /** offset just after the closing `}}` */
  end: number;
  /** `${{-`: strip whitespace before; `-}}`: strip whitespace after */
  stripBefore: boolean;
  stripAfter: boolean;
}

// Python's whitespace, not JavaScript's (which has U+FEFF and lacks U+0085)
const WS = new RegExp(`[${PY_WS}]+`, 'y');
const NAME = /[\p{ID_Start}_][\p{ID_Continue}]*/uy;
const FLOAT = /(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?e[+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/iy;
const INT = /0b(?:_?[01])+|0o(?:_?[0-7])+|0x(?:_?[\da-f])+|[1-9](?:_?\d)*|0(?:_?0)*/iy;
const OPS2 = new Set(['//', '**', '==', '!=', '<=', '>=']);
const OPS1 = new Set([
  '+',
  '-',
  '*',
  '/',
  '%',
  '~',
  '|',
  '.',
  ',',
  ':',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '<',
  '>',
  '=',
]);
const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** ASCII whitespace as Python's `\s` has it: space, \t \n \v \f \r, and \x1c-\x1f */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

function isNameChar(c: number, first: boolean): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (!first && c >= 48 && c <= 57);
}

/** A name: ASCII fast path, Unicode identifiers through the regex. */
function matchName(src: string, pos: number): string | null {
  let i = pos;
  while (i < src.length && isNameChar(src.charCodeAt(i), i === pos)) i++;
  if (i < src.length && src.charCodeAt(i) > 0x7f) return match(NAME, src, pos);
  return i > pos ? src.slice(pos, i) : null;
}

function matchOp(src: string, pos: number): string | undefined {
  const two = src.slice(pos, pos + 2);
  if (two.length === 2 && OPS2.has(two)) return two;
  const one = src[pos];
  return OPS1.has(one) ? one : undefined;
}

function match(re: RegExp, src: string, pos: number): string | null {
  re.lastIndex = pos;
  const m = re.exec(src);
  return m ? m[0] : null;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\n': '',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/**
 * Python `unicode-escape` decoding of a string literal body; unknown escapes stay verbatim. A
 * truncated `\x`/`\u`/`\U` escape or a code point past U+10FFFF is an error, as in Jinja2;
 * `fail` gets the escape's offset in `raw`.
 */
function decodeString(raw: string, fail: (msg: string, offset: number) => never): string {
  const body = raw.replace(/\r\n?/g, '\n');
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[i + 1];
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      i++;
      continue;
    }
    const oct = /^[0-7]{1,3}/.exec(body.slice(i + 1, i + 4));
    const hexLen = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (oct) {
      out += String.fromCodePoint(parseInt(oct[0], 8));
      i += oct[0].length;
    } else if (hexLen > 0) {
      const hex = body.slice(i + 2, i + 2 + hexLen);
      if (hex.length < hexLen || !/^[0-9a-fA-F]+$/.test(hex))
        fail(`truncated \\${e}${'X'.repeat(hexLen)} escape`, offsetIn(raw, i));
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) fail('illegal Unicode character (past U+10FFFF)', offsetIn(raw, i));
      out += String.fromCodePoint(cp);
      i += 1 + hexLen;
    } else {
      out += c;
    }
  }
  return out;
}

/** Where offset `i` of the decoded body (its CR LF and CR made LF) lies in `raw`. */
function offsetIn(raw: string, i: number): number {
  let o = 0;
  for (let k = 0; k < i; k++) o += raw.startsWith('\r\n', o) ? 2 : 1;
  return o;
}

function parseNumber(text: string, isFloat: boolean): number {
  const t = text.replace(/_/g, '');
  if (isFloat) return Number(t);
  const p = t.slice(0, 2).toLowerCase();
  if (p === '0b') return parseInt(t.slice(2), 2);
  if (p === '0o') return parseInt(t.slice(2), 8);
  if (p === '0x') return parseInt(t.slice(2), 16);
  return Number(t);
}

/**
 * Tokenizes from `start` (just after `${{`) to the matching `}}`. `open` is the offset of `${{`,
 * used for error messages.
 */
export function lexRegion(src: string, start: number, open: number): Region {
  const tokens: Token[] = [];
  const stack: { ch: string; at: number }[] = [];
  let pos = start;
  let stripBefore = false;
  if (src[pos] === '-' || src[pos] === '+') {
    stripBefore = src[pos] === '-';
    pos++;
  }
  const fail = (msg: string, at: number): never => {
    const close = src.indexOf('}}', at);
    throw new ExprSyntaxError(msg, at, src.slice(open, close < 0 ? src.length : close + 2));
  };
  for (;;) {
    while (pos < src.length && isSpace(src.charCodeAt(pos))) pos++;
    if (pos < src.length && src.charCodeAt(pos) > 0x7f) {
      const ws = match(WS, src, pos);
      if (ws) pos += ws.length;
    }
    if (pos >= src.length) {
      if (stack.length) fail(`unclosed '${stack[stack.length - 1].ch}'`, stack[stack.length - 1].at);
      fail("missing '}}' to close '${{'", open);
    }
    if (stack.length === 0) {
      const closeLen = src.startsWith('}}', pos) ? 2 : src.startsWith('-}}', pos) ? 3 : 0;
      if (closeLen) {
        tokens.push({ type: 'end', value: '}}', start: pos, end: pos + closeLen });
        return { tokens, end: pos + closeLen, stripBefore, stripAfter: closeLen === 3 };
      }
    }
    const c = src[pos];
    if (c === "'" || c === '"') {
      let i = pos + 1;
      while (i < src.length && src[i] !== c) i += src[i] === '\\' ? 2 : 1;
      if (i >= src.length) fail('unterminated string literal', pos);
      const at = pos + 1;
      const value = decodeString(src.slice(at, i), (msg, o) => fail(msg, at + o));
      tokens.push({ type: 'str', value, start: pos, end: i + 1 });
      pos = i + 1;
      continue;
    }
    if (c >= '0' && c <= '9') {
      const afterDot = pos > 0 && src[pos - 1] === '.';
      const f = afterDot ? null : match(FLOAT, src, pos);
      const text = f ?? match(INT, src, pos)!;
      const value = parseNumber(text, f !== null);
      if (!f && !Number.isSafeInteger(value))
        fail(`integer ${text} is beyond ±2^53 (9007199254740991), where sflow cannot compute exactly`, pos);
      tokens.push({
        type: f ? 'float' : 'int',
        value,
        start: pos,
        end: pos + text.length,
      });
      pos += text.length;
      continue;
    }
    const name = matchName(src, pos);
    if (name) {
      tokens.push({ type: 'name', value: name, start: pos, end: pos + name.length });
      pos += name.length;
      continue;
    }
    const op = matchOp(src, pos);
    if (!op) fail(`unexpected character ${JSON.stringify(c)}`, pos);
    if (op! in CLOSERS) stack.push({ ch: op!, at: pos });
    else if (op === ')' || op === ']' || op === '}') {
      const top = stack.pop();
      if (!top) fail(`unexpected '${op}'`, pos);
      if (CLOSERS[top!.ch] !== op) fail(`unexpected '${op}', expected '${CLOSERS[top!.ch]}'`, pos);
    }
    tokens.push({ type: 'op', value: op!, start: pos, end: pos + op!.length });
    pos += op!.length;
  }
}
