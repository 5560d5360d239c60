/**
 * Python-flavoured regular expressions compiled to JS RegExp (config.md 1.15: result
 * patterns are written in Python syntax). Translated: named groups `(?P<n>…)`, back
 * references `(?P=n)`, leading inline flags `(?i)`, `(?m)`, `(?s)`, `(?x)` is rejected, and
 * `\A` / `\Z` anchors. Everything else is passed through unchanged.
 */

export class PyRegexError extends Error {}

export function translatePyRegex(src: string): { source: string; flags: string } {
  let flags = '';
  let s = src;
  const lead = /^\(\?([aiLmsux]+)\)/.exec(s);
  if (lead) {
    for (const f of lead[1]) {
      if (f === 'i' || f === 'm' || f === 's') flags += flags.includes(f) ? '' : f;
      else if (f === 'x') throw new PyRegexError('verbose flag (?x) is not supported');
    }
    s = s.slice(lead[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      const nx = s[i + 1] ?? '';
      if (!inClass && nx === 'A') out += '^';
      else if (!inClass && nx === 'Z') out += '$(?![\\s\\S])';
      else out += c + nx;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (s[i + 1] === '^') out += s[++i];
      if (s[i + 1] === ']') out += '\\' + s[++i]; // `[]...]`: a literal ] first in a class
      continue;
    }
    if (s.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    if (s.startsWith('(?P=', i)) {
      const end = s.indexOf(')', i);
      if (end < 0) throw new PyRegexError('unterminated (?P= reference');
      out += `\\k<${s.slice(i + 4, end)}>`;
      i = end;
      continue;
    }
    out += c;
  }
  return { source: out, flags };
}

/** Compiles a Python-syntax pattern; throws PyRegexError with a readable message. */
export function compilePyRegex(src: string, extraFlags = ''): RegExp {
  const { source, flags } = translatePyRegex(src);
  try {
    return new RegExp(source, [...new Set((flags + extraFlags).split(''))].join(''));
  } catch (e) {
    throw new PyRegexError(`invalid regex ${JSON.stringify(src)}: ${(e as Error).message}`);
  }
}
