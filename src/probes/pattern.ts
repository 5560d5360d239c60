/**
 * log_watch / body patterns: a literal substring unless the text starts with `re:` or
 * `regex:`, then the rest is a regular expression. The recipes were written for Python's
 * `re`; the commonly used Python-only spellings are translated to JS RegExp:
 *   (?P<name>…) → (?<name>…),  (?P=name) → \k<name>,  \A → ^,  \Z → $,
 *   leading inline flags (?i) (?m) (?s) (and the no-op a/u/L) → RegExp flags.
 * Anything else that JS rejects is a plan error naming the pattern.
 */

import { translatePythonRegex } from '../util/python-regex.js';
import { errorMessage } from '../util/errors.js';

export { translatePythonRegex };

export type CompiledPattern =
  { kind: 'literal'; text: string } | { kind: 'regex'; re: RegExp; source: string };

const PREFIXES = ['re:', 'regex:'];

export function isRegexPattern(pattern: string): boolean {
  return PREFIXES.some((p) => pattern.startsWith(p));
}

/** A regex JS cannot compile; the probe kinds turn it into a located plan error. */
export class PatternError extends Error {
  readonly code = 'PROBE_PATTERN';
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'PatternError';
  }
}

/**
 * Compiles a probe pattern. Regexes get the `g` flag (callers reset lastIndex). Throws a
 * PatternError for a regex JS cannot compile (the kinds check their patterns when they plan).
 */
export function compilePattern(pattern: string): CompiledPattern {
  const prefix = PREFIXES.find((p) => pattern.startsWith(p));
  if (!prefix) return { kind: 'literal', text: pattern };
  const raw = pattern.slice(prefix.length);
  try {
    const { source, flags } = translatePythonRegex(raw);
    return { kind: 'regex', re: new RegExp(source, flags + 'g'), source };
  } catch (e) {
    throw new PatternError(
      `invalid regular expression in probe pattern ${JSON.stringify(pattern)}: ${errorMessage(e)}`,
      'patterns use JavaScript RegExp syntax; without the re: prefix the text is matched literally',
    );
  }
}
