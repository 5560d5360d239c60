import fc from 'fast-check';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogMatcher, LogWatchCheck } from '../../../src/probes/log-watch.js';
import { compilePattern } from '../../../src/probes/pattern.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-lw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const signal = () => new AbortController().signal;

/** Feeds `text` (as UTF-8) in pieces cut at `cuts` and returns the count. */
function countIn(pattern: string, text: string, cuts: number[] = []) {
  const m = new LogMatcher(compilePattern(pattern));
  const bytes = Buffer.from(text, 'utf8');
  let prev = 0;
  for (const c of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    m.feed(bytes.subarray(prev, c));
    prev = c;
  }
  return m.current();
}

describe('LogMatcher', () => {
  it('counts literal matches like findall (non-overlapping), regex metacharacters literal', () => {
    expect(countIn('aa', 'aaaa a aaa').count).toBe(3);
    expect(countIn('a.b', 'a.b axb a.b').count).toBe(2);
    expect(countIn('ready', 'not yet\nserver ready\nready again\n')).toEqual({
      count: 2,
      lastMatchLine: 'ready again',
    });
  });

  it('counts a literal split across chunk boundaries at every position', () => {
    const text = 'xx Server started yy Server started zz';
    for (let cut = 1; cut < text.length; cut++) {
      for (let cut2 = cut; cut2 < text.length; cut2 += 3) {
        expect(countIn('Server started', text, [cut, cut2]).count).toBe(2);
      }
    }
  });

  it('matches regexes line by line, with ^ and $ at line ends', () => {
    const text = 'step 1 ok\nstep 2 ok\r\nstep 3 FAILED\rstep 4 ok\n';
    expect(countIn('re:^step \\d+ ok$', text).count).toBe(3);
    expect(countIn('regex:step (?P<n>\\d) ok', text).count).toBe(3);
    expect(countIn('re:ok\\s+step', text).count).toBe(0); // never across lines
    expect(countIn('re:FAILED', text).lastMatchLine).toBe('step 3 FAILED');
  });

  it('counts the unterminated last line without committing it', () => {
    const m = new LogMatcher(compilePattern('re:listening on \\d+'));
    m.feed(Buffer.from('boot\nlistening on 80'));
    expect(m.current().count).toBe(1);
    expect(m.count).toBe(0);
    m.feed(Buffer.from('80\n'));
    expect(m.current()).toEqual({ count: 1, lastMatchLine: 'listening on 8080' });
  });

  it('does not count a \\r\\n split across chunks as an extra line', () => {
    expect(countIn('re:^$', 'a\r\nb\r\n', [2]).count).toBe(0);
    // a \r that is not the last character of its chunk is a line end of its own
    expect(countIn('re:a+b', '\ra\nb', [2]).count).toBe(0);
  });

  it('matches the text without escape sequences, and decodes split UTF-8', () => {
    const colored = '\x1b[32mINFO\x1b[0m:     Uvicorn running on http://0.0.0.0:8000\n';
    expect(countIn('INFO:     Uvicorn running', colored).count).toBe(1);
    expect(countIn('re:^INFO: +Uvicorn', colored, [3, 9]).count).toBe(1);
    const text = 'modèle prêt ✓ 😀\n'.repeat(3);
    for (let cut = 1; cut < Buffer.byteLength(text); cut++)
      expect(countIn('prêt ✓ 😀', text, [cut]).count).toBe(3);
  });

  it('keeps memory bounded on a huge line without newline', () => {
    const m = new LogMatcher(compilePattern('re:needle'), 64 * 1024);
    const hay = Buffer.alloc(32 * 1024, 'x');
    for (let i = 0; i < 100; i++) m.feed(i === 50 ? Buffer.from('needle') : hay);
    expect(m.current().count).toBe(1);
  });

  it('gives the same count however the bytes are chunked (property)', () => {
    const token = fc.constantFrom('ab', 'a', 'b', '\n', '\r', '\r\n', 'é', '\x1b[1m', ' ');
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 50 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (tokens, cuts) => {
          const text = tokens.join('');
          const len = Buffer.byteLength(text);
          const pieces = cuts.map((c) => c % (len + 1));
          const plain = text.replace(/\x1b\[1m/g, ''); // eslint-disable-line no-control-regex
          expect(countIn('aba', text, pieces).count).toBe(plain.split('aba').length - 1);
          const lines = plain.split(/\r\n|\r|\n/);
          const perLine = lines.reduce((n, l) => n + (l.match(/a+b/g)?.length ?? 0), 0);
          expect(countIn('re:a+b', text, pieces).count).toBe(perLine);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('LogWatchCheck', () => {
  it('reads the log incrementally and passes at match_count', async () => {
    const path = join(dir, `w${++seq}.log`);
    const c = new LogWatchCheck({ path, pattern: 'Loaded shard', matchCount: 2 });
    expect(c.describe()).toBe('log_watch "Loaded shard"');
    expect(await c.check(signal())).toEqual({ ok: false, detail: `log not created yet (${path})` });
    writeFileSync(path, 'start\nLoaded sha');
    expect(await c.check(signal())).toEqual({ ok: false, detail: '0/2 matches' });
    const before = c.consumed;
    appendFileSync(path, 'rd 1 of 2\n');
    expect(await c.check(signal())).toEqual({ ok: false, detail: '1/2 matches; last: Loaded shard 1 of 2' });
    expect(c.consumed).toBeGreaterThan(before);
    appendFileSync(path, 'Loaded shard 2 of 2\n');
    expect(await c.check(signal())).toEqual({ ok: true, detail: '2/2 matches; last: Loaded shard 2 of 2' });
  });

  it('starts over when the log is truncated (a retry)', async () => {
    const path = join(dir, `w${++seq}.log`);
    writeFileSync(path, 'ready\nready\n');
    const c = new LogWatchCheck({ path, pattern: 're:^ready$', matchCount: 2, logTask: 'server' });
    expect(c.describe()).toBe('log_watch "re:^ready$" in server');
    expect((await c.check(signal())).ok).toBe(true);
    writeFileSync(path, 'ready\n');
    expect(await c.check(signal())).toEqual({ ok: false, detail: '1/2 matches; last: ready' });
  });

  it('never re-reads what it consumed (offset grows with the file only)', async () => {
    const path = join(dir, `w${++seq}.log`);
    writeFileSync(path, 'x'.repeat(1_000_000) + '\n');
    const c = new LogWatchCheck({ path, pattern: 'needle', chunkBytes: 65536 });
    await c.check(signal());
    expect(c.consumed).toBe(1_000_001);
    appendFileSync(path, 'needle\n');
    expect((await c.check(signal())).ok).toBe(true);
    expect(c.consumed).toBe(1_000_008);
  });

  it('serializes overlapping checks (no double counting)', async () => {
    const path = join(dir, `w${++seq}.log`);
    writeFileSync(path, 'hit\n'.repeat(1000));
    const c = new LogWatchCheck({ path, pattern: 'hit', matchCount: 1001, chunkBytes: 4096 });
    const [a, b] = await Promise.all([c.check(signal()), c.check(signal())]);
    expect(a.detail).toBe('1000/1001 matches; last: hit');
    expect(b.detail).toBe('1000/1001 matches; last: hit');
  });
});

describe('LogWatchCheck at the regex time limit', () => {
  it('reports the limit on every check from then on (the pattern never runs again)', async () => {
    const path = join(dir, `limit-${++seq}.log`);
    writeFileSync(path, `${'a'.repeat(3000)}!\n`);
    const c = new LogWatchCheck({ path, pattern: 're:^(a+)+$' });
    const first = await c.check(signal());
    expect(first.ok).toBe(false);
    expect(first.limit).toMatch(/catastrophic backtracking/);
    appendFileSync(path, 'aaa\n'); // would match: the stopped pattern is not run again
    expect((await c.check(signal())).limit).toBe(first.limit);
  }, 30_000);
});
