/**
 * Recipe regexes run under a deadline: a catastrophically backtracking pattern is stopped and
 * reported by every user of it (log_watch, result patterns), which then carry on without it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  countLineMatches,
  execEachLine,
  RegexTimeoutError,
  REGEX_DEADLINE_MS,
  testGuarded,
} from '../../../src/util/guarded-regex.js';
import { LogMatcher } from '../../../src/probes/log-watch.js';
import { compilePattern } from '../../../src/probes/pattern.js';
import { parseLogResult } from '../../../src/outputs/results.js';
import { scratchDir } from '../../helpers/scratch.js';

const evil = 'a'.repeat(3000) + '!';

describe('guarded regex', () => {
  it('matches like plain RegExp: findall counts per line, first match per line', () => {
    const r = countLineMatches(/x/m, /x/g, 'x x\nno\r\nxx\rx', true);
    expect(r).toEqual({ count: 5, lastLine: 'x' });
    expect(countLineMatches(undefined, /x/g, 'x x\nno\nlast x', false)).toEqual({
      count: 2,
      lastLine: 'x x',
    });
    const hits = execEachLine(/(?<v>\d+) tok/, ['a 12 tok', 'none', '7 tok 8 tok']);
    expect(hits.map(([i, m]) => [i, m[1], m.groups?.v])).toEqual([
      [0, '12', '12'],
      [2, '7', '7'],
    ]);
    expect(testGuarded(/b$/m, 'a\nb\nc')).toBe(true);
  });

  it('stops a catastrophically backtracking pattern at the deadline', () => {
    let err: unknown;
    try {
      testGuarded(/^(a+)+$/, evil);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RegexTimeoutError);
    expect((err as Error).message).toContain(`took longer than ${REGEX_DEADLINE_MS} ms`);
    expect(testGuarded(/a+!/, evil)).toBe(true); // the guard is usable again at once
  });

  it('log_watch: the matcher reports the stopped pattern and stops matching', () => {
    const m = new LogMatcher(compilePattern('re:^(a+)+$'));
    m.feedText(`aaaa\n${evil}\naaaa\n`);
    expect(m.failure).toContain('catastrophic backtracking');
    m.feedText('aaaa\n');
    expect(m.current().count).toBe(0); // never run again
  });

  it('result patterns: the stopped pattern is an error, the others still parse', async () => {
    const log = join(scratchDir('sflow-guarded-'), 'task.log');
    writeFileSync(log, `tokens: 42\n${evil}\n`);
    const r = await parseLogResult(
      [
        { name: 'bad', regex: '^(a+)+$', type: 'auto', aggregate: 'last', required: false },
        { name: 'tokens', regex: 'tokens: (\\d+)', type: 'int', aggregate: 'last', required: true },
      ],
      log,
    );
    expect(r.errors, r.errors.join('\n')).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^bad: regular expression .*catastrophic backtracking/);
    expect(r.values.tokens).toBe(42);
  });
});
