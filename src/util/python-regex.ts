/**
 * Python `re` syntax → JavaScript RegExp source and flags, for the patterns recipes write for
 * Python (result patterns, `re:` log_watch patterns): named groups `(?P<n>…)`, back references
 * `(?P=n)`, leading inline flags `(?i)` `(?m)` `(?s)` (the no-op a/u/L dropped, `(?x)` rejected),
 * and the `\\A` / `\\Z` anchors. Everything else passes through unchanged.
 */

export class PyRegexError extends Error {}

export function translatePythonRegex(src: string): { source: string; flags: string } {
  let flags = '';
  let s = src;
  for (let lead = /^\(\?([aiLmsux]+)\)/.exec(s); lead; lead = /^\(\?([aiLmsux]+)\)/.exec(s)) {
    for (const f of lead[1]) {
      if (f === 'i' || f === 'm' || f === 's') flags += flags.includes(f) ? '' : f;
      else if (f === 'x') throw new PyRegexError('the verbose flag (?x) is not supported');
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
