/**
 * Python printf-style formatting: `'%02d-%s' % (i, name)` and Jinja2's `format` filter.
 * Conversions s r a d i u f F e E g G x X o c %, flags `-+ 0#`, width/precision (incl. `*`),
 * `%(key)s` with a dict. Numbers are rounded like Python (half-even on the exact binary value).
 */
import { OpError, floatToIntError } from './errors.js';
import { capped, sized } from './meter.js';
import { exactDigits, roundDigits } from './pyconv.js';
import { intStr, renderValue, reprValue } from './render.js';
import { type Value, isDict, isIntLike, isNumeric, isTuple, num, typeName, unwrap } from './values.js';

function fixedAbs(ax: number, prec: number): string {
  const { digits, point } = exactDigits(ax);
  let r = roundDigits(digits, point + prec);
  let intLen = point + (r.length - (point + prec));
  if (r.length < point + prec) {
    r = r.padEnd(point + prec, '0');
    intLen = point;
  }
  const ip = r.slice(0, intLen).replace(/^0+(?=\d)/, '') || '0';
  return prec > 0 ? `${ip}.${r.slice(intLen)}` : ip;
}

/** Mantissa digits (prec+1 of them) and decimal exponent of |x| rounded to prec+1 significant digits. */
function sci(ax: number, prec: number): { m: string; exp: number } {
  if (ax === 0) return { m: '0'.repeat(prec + 1), exp: 0 };
  const { digits, point } = exactDigits(ax);
  const lead = digits.search(/[1-9]/);
  let m = roundDigits(digits.slice(lead), prec + 1);
  let exp = point - lead - 1;
  if (m.length > prec + 1) {
    m = m.slice(0, prec + 1);
    exp++;
  }
  return { m: m.padEnd(prec + 1, '0'), exp };
}

function expStr(e: number): string {
  return (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
}

function formatFloat(x: number, conv: string, prec: number, alt: boolean): string {
  const upper = conv === conv.toUpperCase();
  if (!Number.isFinite(x)) {
    const s = Number.isNaN(x) ? 'nan' : 'inf';
    return upper ? s.toUpperCase() : s;
  }
  const ax = Math.abs(x);
  const lc = conv.toLowerCase();
  let body: string;
  if (lc === 'f') body = fixedAbs(ax, prec) + (alt && prec === 0 ? '.' : '');
  else if (lc === 'e') {
    const { m, exp } = sci(ax, prec);
    body = m[0] + (prec > 0 || alt ? '.' : '') + m.slice(1) + 'e' + expStr(exp);
  } else {
    const p = prec === 0 ? 1 : prec;
    const { exp } = sci(ax, p - 1);
    if (exp >= -4 && exp < p) {
      body = fixedAbs(ax, p - 1 - exp);
      // '%#g' % 100000 is '100000.': the alternate form always has a point
      if (alt && !body.includes('.')) body += '.';
    } else {
      const { m } = sci(ax, p - 1);
      body = m[0] + (m.length > 1 || alt ? '.' : '') + m.slice(1) + 'e' + expStr(exp);
    }
    if (!alt && body.includes('.')) {
      const [mant, e] = body.split('e');
      body = mant.replace(/0+$/, '').replace(/\.$/, '') + (e === undefined ? '' : 'e' + e);
    }
  }
  return upper ? body.toUpperCase() : body;
}

/** Python `ascii()`: repr with non-ASCII characters escaped. */
function asciiRepr(r: string): string {
  return r.replace(/[^\p{ASCII}]/gu, (c) => {
    const n = c.codePointAt(0)!;
    return n <= 0xff
      ? '\\x' + n.toString(16).padStart(2, '0')
      : n <= 0xffff
        ? '\\u' + n.toString(16).padStart(4, '0')
        : '\\U' + n.toString(16).padStart(8, '0');
  });
}

const SPEC = /%(?:\(([^)]*)\))?([-+ 0#]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([sradiufFeEgGxXoc%])?/g;

/** The arguments `replace` passes for a match of SPEC: the match, its five groups, its offset. */
type SpecMatch = [
  whole: string,
  key: string | undefined,
  flags: string,
  width: string | undefined,
  precision: string | undefined,
  conv: string | undefined,
  offset: number,
];

function unsupportedChar(fmt: string, at: number): OpError {
  const c = fmt.codePointAt(at)!;
  // Python counts code points, JavaScript UTF-16 units
  const index = [...fmt.slice(0, at)].length;
  return new OpError(
    `unsupported format character '${String.fromCodePoint(c)}' (0x${c.toString(16)}) at index ${index}`,
  );
}

/** Python `fmt % args`. */
export function percentFormat(fmt: string, rhs: Value): string {
  rhs = unwrap(rhs);
  const tuple = isTuple(rhs);
  const args: Value[] = Array.isArray(rhs) && tuple ? rhs : [rhs];
  const mapping = !tuple && (isDict(rhs) || Array.isArray(rhs)) ? rhs : null;
  let argi = 0;
  let usedMapping = false;
  const nextArg = (): Value => {
    if (argi >= args.length) throw new OpError('not enough arguments for format string');
    return args[argi++];
  };
  let built = fmt.length;
  const out = fmt.replace(SPEC, (...m: SpecMatch) => {
    const [whole, key, flags, width, precision, conv, offset] = m;
    if (!conv) {
      const at = offset + whole.length;
      if (at >= fmt.length) throw new OpError('incomplete format');
      throw unsupportedChar(fmt, at);
    }
    if (conv === '%') {
      // only a bare '%%' is a percent sign (Python 3.11 refuses '%5%' and '%(k)%')
      if (whole === '%%') return '%';
      throw unsupportedChar(fmt, offset + whole.length - 1);
    }
    let arg: Value;
    const w = width === '*' ? num(nextArg()) : width ? Number(width) : 0;
    const p = precision === '*' ? num(nextArg()) : precision !== undefined ? Number(precision) : undefined;
    // `'%0999999999d' % 1`: the padding would be built in full
    sized(Math.abs(w));
    if (p !== undefined) sized(Math.abs(p));
    if (key !== undefined) {
      if (!isDict(mapping)) throw new OpError('format requires a mapping');
      usedMapping = true;
      if (!Object.hasOwn(mapping, key)) throw new OpError(`KeyError: '${key}'`);
      arg = mapping[key];
    } else arg = nextArg();
    arg = unwrap(arg);
    let body: string;
    let sign = '';
    let prefix = '';
    const numeric = 'diufFeEgGxXo'.includes(conv);
    if (conv === 's') body = renderValue(arg);
    else if (conv === 'r') body = reprValue(arg);
    else if (conv === 'a') body = asciiRepr(reprValue(arg));
    else if (conv === 'c') {
      if (typeof arg === 'string' && [...arg].length === 1) body = arg;
      else if (!isIntLike(arg)) throw new OpError('%c requires int or char');
      else if (num(arg) < 0 || num(arg) > 0x10ffff) throw new OpError('%c arg not in range(0x110000)');
      else body = String.fromCodePoint(num(arg));
    } else {
      // Python 3.11's wording for each kind of conversion (the float ones name it too)
      if ('xXo'.includes(conv) && !isIntLike(arg))
        throw new OpError(`%${conv} format: an integer is required, not ${typeName(arg)}`);
      if ('diu'.includes(conv) && !isNumeric(arg))
        throw new OpError(`%${conv} format: a real number is required, not ${typeName(arg)}`);
      if (!isNumeric(arg)) throw new OpError(`%${conv} format: must be real number, not ${typeName(arg)}`);
      const x = num(arg);
      if ('diu'.includes(conv)) {
        if (!Number.isFinite(x)) throw floatToIntError(x);
        const t = Math.trunc(x);
        body = intStr(Math.abs(t));
        if (t < 0) sign = '-';
      } else if ('xXo'.includes(conv)) {
        body = BigInt(Math.abs(x)).toString(conv === 'o' ? 8 : 16);
        if (conv === 'X') body = body.toUpperCase();
        if (x < 0) sign = '-';
        if (flags.includes('#')) prefix = conv === 'o' ? '0o' : conv === 'x' ? '0x' : '0X';
      } else {
        body = formatFloat(x, conv, p ?? 6, flags.includes('#'));
        if (x < 0 || Object.is(x, -0)) sign = '-';
      }
      if (!sign && flags.includes('+')) sign = '+';
      else if (!sign && flags.includes(' ')) sign = ' ';
    }
    if (p !== undefined && 'sra'.includes(conv)) body = [...body].slice(0, p).join('');
    if (numeric && p !== undefined && 'diuxXo'.includes(conv) && body.length < p)
      body = body.padStart(p, '0');
    let text = sign + prefix + body;
    if (text.length < w) {
      if (flags.includes('-')) text = text.padEnd(w, ' ');
      else if (numeric && flags.includes('0'))
        text = sign + prefix + body.padStart(w - sign.length - prefix.length, '0');
      else text = text.padStart(w, ' ');
    }
    built += text.length;
    capped(built);
    return text;
  });
  sized(out.length);
  if (argi < args.length && !mapping && !usedMapping) {
    throw new OpError('not all arguments converted during string formatting');
  }
  return out;
}
