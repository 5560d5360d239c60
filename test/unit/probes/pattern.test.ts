import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  isRegexPattern,
  PatternError,
  translatePythonRegex,
} from '../../../src/probes/pattern.js';

describe('probe patterns', () => {
  it('is literal unless prefixed with re: or regex:', () => {
    expect(compilePattern('a.b (x)')).toEqual({ kind: 'literal', text: 'a.b (x)' });
    expect(isRegexPattern('re:x')).toBe(true);
    expect(isRegexPattern('regex:x')).toBe(true);
    expect(isRegexPattern('x re:')).toBe(false);
    const r = compilePattern('regex:a.b');
    expect(r.kind === 'regex' && r.re.test('axb')).toBe(true);
    expect(r.kind === 'regex' && r.re.flags).toBe('g');
  });

  it('translates Python-only syntax', () => {
    expect(translatePythonRegex('(?P<port>\\d+) (?P=port)')).toEqual({
      source: '(?<port>\\d+) \\k<port>',
      flags: '',
    });
    expect(translatePythonRegex('(?i)ready')).toEqual({ source: 'ready', flags: 'i' });
    expect(translatePythonRegex('(?ms)\\Astart.*end\\Z')).toEqual({
      source: '^start.*end$(?![\\s\\S])',
      flags: 'ms',
    });
    // escaped backslash and character classes are left alone
    expect(translatePythonRegex('\\\\(?P<x>a)[\\A(?P<]').source).toBe('\\\\(?<x>a)[\\A(?P<]');
    expect(translatePythonRegex('[]A]\\Z').source).toBe('[\\]A]$(?![\\s\\S])');
    expect(() => translatePythonRegex('(?x) a b')).toThrow(/verbose/);
  });

  it('named groups work after translation', () => {
    const r = compilePattern('re:Uvicorn running on http://(?P<host>[\\d.]+):(?P<port>\\d+)');
    if (r.kind !== 'regex') throw new Error('expected a regex');
    const m = r.re.exec('INFO: Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C)');
    expect(m?.groups).toEqual({ host: '0.0.0.0', port: '8000' });
  });

  it('reports an invalid regex naming the pattern (the kinds make it a located plan error)', () => {
    let err: unknown;
    try {
      compilePattern('re:(unclosed');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatternError);
    expect((err as PatternError).code).toBe('PROBE_PATTERN');
    expect((err as PatternError).hint).toContain('JavaScript RegExp syntax');
    expect((err as PatternError).message).toContain('"re:(unclosed"');
  });
});
