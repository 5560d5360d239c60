/**
 * log_watch at its edges (src/probes/log-watch.ts): the line a message shows for the last match
 * (trailing blanks dropped, cut at 200 characters, bounded by `\n` and `\r`), what is committed
 * and what is only carried, `\r\n` split across feeds, the cap on one carried line, the quick
 * whole-block pre-test, and the file side: an empty pattern, an unreadable path, a start offset at
 * the end of the log, the watched task in the description. Complements log-watch.test.ts.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogMatcher, LogWatchCheck } from '../../../src/probes/log-watch.js';
import { compilePattern } from '../../../src/probes/pattern.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-log-watch-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function matcher(pattern: string, cap?: number): LogMatcher {
  return new LogMatcher(compilePattern(pattern), cap);
}

describe('the line shown for the last match', () => {
  it('is the match line without trailing blanks, bounded by \\n and \\r', () => {
    const m = matcher('PAT');
    m.feedText('PAT at the start  \t\nnext line');
    expect(m.lastMatchLine).toBe('PAT at the start');
    const r = matcher('PAT');
    r.feedText('progress 10%\rprogress PAT done\n and more');
    expect(r.lastMatchLine).toBe('progress PAT done');
  });

  it('is cut to 200 characters with an ellipsis, not before', () => {
    const prefix = Array.from({ length: 300 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const long = matcher('PAT');
    long.feedText(`${prefix}PAT tail\n`);
    // at most 200 characters before the match, then cut to 200 shown
    expect(long.lastMatchLine).toBe(`${prefix.slice(100)}…`);
    const exact = matcher('PAT');
    const line = 'PAT' + 'x'.repeat(197);
    exact.feedText(`${line}\n`);
    expect(exact.lastMatchLine).toBe(line);
  });

  it('for a regex is the whole matching line, and stays when later lines do not match', () => {
    const m = matcher('re:ready');
    m.feedText('booting\nserver ready   \n');
    m.feedText('still serving\n');
    expect(m.count).toBe(1);
    expect(m.lastMatchLine).toBe('server ready');
    expect(m.current()).toEqual({ count: 1, lastMatchLine: 'server ready' });
  });
});

describe('committed and carried text', () => {
  it('commits at a break at the very start of a feed', () => {
    const m = matcher('re:ready');
    m.feedText('ready');
    expect(m.count).toBe(0);
    expect(m.current()).toEqual({ count: 1, lastMatchLine: 'ready' });
    m.feedText('\n');
    expect(m.count).toBe(1);
  });

  it('keeps a partial last line out of the committed block', () => {
    const m = matcher('re:rea');
    m.feedText('ready\nrea');
    expect(m.count).toBe(1);
    m.feedText('dy\n');
    expect(m.count).toBe(2);
  });

  it('shows the carried line only when it matches', () => {
    const m = matcher('re:ready');
    m.feedText('ready\nxyz');
    expect(m.current()).toEqual({ count: 1, lastMatchLine: 'ready' });
    m.feedText(' ready again');
    expect(m.current()).toEqual({ count: 2, lastMatchLine: 'xyz ready again' });
  });

  it('does not see an empty line in a \\r\\n split across feeds, but sees one that is there', () => {
    const split = matcher('re:^$');
    split.feedText('a\r');
    split.feedText('\nb\n');
    expect(split.count).toBe(0);
    const first = matcher('re:^$');
    first.feedText('\nx\n');
    expect(first.count).toBe(1);
  });

  it('matches a line longer than the cap in pieces, committing each', () => {
    const m = matcher('re:a', 10);
    m.feedText('a'.repeat(10));
    expect(m.count).toBe(0);
    expect(m.current().count).toBe(10);
    m.feedText('a');
    expect(m.count).toBe(11);
    m.feedText('bbb\n');
    expect(m.count).toBe(11);
  });

  it('finds an anchored pattern on any line of a block', () => {
    const m = matcher('re:^ready$');
    m.feedText('x\nready\ny\n');
    expect(m.count).toBe(1);
  });
});

describe('LogWatchCheck on files', () => {
  const signal = () => new AbortController().signal;

  it('meets an empty literal pattern at once, even without a log', async () => {
    const c = new LogWatchCheck({ path: join(dir, 'absent.log'), pattern: '' });
    expect(await c.check(signal())).toEqual({ ok: true, detail: 'empty pattern' });
  });

  it('tells a log not created yet from one it cannot read', async () => {
    const missing = join(dir, 'later.log');
    expect(await new LogWatchCheck({ path: missing, pattern: 'x' }).check(signal())).toEqual({
      ok: false,
      detail: `log not created yet (${missing})`,
    });
    const file = join(dir, 'plain');
    writeFileSync(file, 'x');
    expect(await new LogWatchCheck({ path: join(file, 'below.log'), pattern: 'x' }).check(signal())).toEqual({
      ok: false,
      detail: 'cannot read log: ENOTDIR',
    });
  });

  it('counts nothing before a start offset at the end of the log, then what is appended', async () => {
    const log = join(dir, 'offset.log');
    writeFileSync(log, 'ready\n');
    const c = new LogWatchCheck({ path: log, pattern: 'ready', startOffset: 6 });
    expect(await c.check(signal())).toEqual({ ok: false, detail: '0/1 matches' });
    appendFileSync(log, 'ready again\n');
    expect(await c.check(signal())).toEqual({ ok: true, detail: '1/1 matches; last: ready again' });
  });

  it('names the watched task and rounds the match count down, at least one', () => {
    const c = new LogWatchCheck({
      path: join(dir, 'a.log'),
      pattern: 're:up',
      logTask: 'server',
      matchCount: 2.7,
    });
    expect(c.describe()).toBe('log_watch "re:up" in server');
    expect(c.required).toBe(2);
    expect(new LogWatchCheck({ path: join(dir, 'a.log'), pattern: 'up', matchCount: 0 }).required).toBe(1);
    expect(new LogWatchCheck({ path: join(dir, 'a.log'), pattern: 'up' }).describe()).toBe('log_watch "up"');
  });
});
