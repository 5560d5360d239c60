/**
 * log_watch / body patterns: a literal substring unless the text starts with `re:` or
 * `regex:`, then the rest is a regular expression. The recipes were written for Python's
 * `re`; the commonly used Python-only spellings are translated to JS RegExp:
 *   (?P<name>…) → (?<name>…),  (?P=name) → \k<name>,  \A → ^,  \Z → $,
 *   leading inline flags (?i) (?m) (?s) (and the no-op a/u/L) → RegExp flags.
 * Anything else that JS rejects is a plan error naming the pattern.
 */

import { SflowError } from '../config/errors.js';

export type CompiledPattern =
  { kind: 'literal'; text: string } | { kind: 'regex'; re: RegExp; source: string };

const PREFIXES = ['re:', 'regex:'];

export function isRegexPattern(pattern: string): boolean {
  return PREFIXES.some((p) => pattern.startsWith(p));
}

/** Python `re` syntax → JS source and flags (see the module comment). */
export function translatePythonRegex(src: string): { source: string; flags: string } {
  const flags = new Set<string>();
  let s = src;
  for (let m = /^\(\?([aiLmsux]+)\)/.exec(s); m; m = /^\(\?([aiLmsux]+)\)/.exec(s)) {
    for (const f of m[1]) {
      if (f === 'x') throw new Error('the verbose flag (?x) is not supported');
      if (f === 'i' || f === 'm' || f === 's') flags.add(f);
    }
    s = s.slice(m[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      const nx = s[i + 1] ?? '';
      if (!inClass && nx === 'A') out += '^';
      else if (!inClass && nx === 'Z') out += '$';
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
      // a ']' right after '[' or '[^' is a literal in both dialects
      if (s[i + 1] === '^') out += s[++i];
      if (s[i + 1] === ']') out += s[++i];
      continue;
    }
    if (s.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    const backref = /^\(\?P=(\w+)\)/.exec(s.slice(i, i + 64));
    if (backref) {
      out += `\\k<${backref[1]}>`;
      i += backref[0].length - 1;
      continue;
    }
    out += c;
  }
  return { source: out, flags: [...flags].join('') };
}

/**
 * Compiles a probe pattern. Regexes get the `g` flag (callers reset lastIndex). Throws a
 * plan-phase SflowError (code PROBE_PATTERN) for a regex JS cannot compile.
 */
export function compilePattern(pattern: string): CompiledPattern {
  const prefix = PREFIXES.find((p) => pattern.startsWith(p));
  if (!prefix) return { kind: 'literal', text: pattern };
  const raw = pattern.slice(prefix.length);
  try {
    const { source, flags } = translatePythonRegex(raw);
    return { kind: 'regex', re: new RegExp(source, flags + 'g'), source };
  } catch (e) {
    throw new SflowError(
      'PROBE_PATTERN',
      `invalid regular expression in probe pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`,
      {
        phase: 'plan',
        hint: 'patterns use JavaScript RegExp syntax; without the re: prefix the text is matched literally',
      },
    );
  }
}
