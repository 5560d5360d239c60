/**
 * The log tailer's contract in detail (issue 31's mutation run on src/outputs/task-log.ts): chunk
 * sizes, subscribers that keep their chunks, unsubscribing, starting twice, the poll timer's
 * life, a read that lands while another is in flight, open errors, fs.watch off, and the console
 * copy around skipped chunks. Waits poll with deadlines; nothing depends on how fast this is.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TAIL_CHUNK_BYTES, LogTailer } from '../../../src/outputs/task-log.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-tailer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());
let n = 0;
const file = (text: string | Buffer): string => {
  const p = join(dir, `t${++n}.log`);
  writeFileSync(p, text);
  return p;
};

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** a buffer of distinct, non-repeating bytes (so a chunk overwritten by a later read shows) */
const noise = (size: number): Buffer =>
  Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + (i >> 8)) % 251));

describe('LogTailer chunks', () => {
  it('hands 64 KiB chunks by default, and never less than 1 KiB a chunk', async () => {
    expect(DEFAULT_TAIL_CHUNK_BYTES).toBe(65_536);
    const data = noise(200_000);
    const path = file(data);
    const sizes: number[] = [];
    const t = new LogTailer({ path, task: 't', watch: false });
    t.subscribe((c) => sizes.push(c.length));
    await t.close();
    expect(sizes).toEqual([65_536, 65_536, 65_536, 200_000 - 3 * 65_536]);

    const small: number[] = [];
    const s = new LogTailer({ path, task: 's', watch: false, chunkBytes: 10 });
    s.subscribe((c) => small.push(c.length));
    await s.close();
    expect(small.slice(0, -1).every((k) => k === 1024)).toBe(true);
    expect(small.reduce((a, b) => a + b, 0)).toBe(200_000);
    expect(s.offset).toBe(200_000);
  });

  it('subscribers may keep their chunks across reads; no chunk is ever empty', async () => {
    const data = noise(5 * 16 * 1024); // several reads of 16 chunks of 1 KiB, a multiple of both
    const path = file(data);
    const kept: Buffer[] = [];
    const offsets: number[] = [];
    const t = new LogTailer({ path, task: 'k', watch: false, chunkBytes: 1024, onLine: () => undefined });
    t.subscribe((c, at) => {
      kept.push(c);
      offsets.push(at);
    });
    await t.close();
    expect(kept.every((c) => c.length === 1024)).toBe(true);
    expect(Buffer.concat(kept).equals(data)).toBe(true);
    expect(offsets).toEqual(kept.map((_, i) => i * 1024));
  });

  it('an unsubscribed listener gets nothing more', async () => {
    const path = file('first\n');
    const got: string[] = [];
    const t = new LogTailer({ path, task: 'u', watch: false, pollMs: 3_600_000 });
    const off = t.subscribe((c) => got.push(c.toString()));
    const other: string[] = [];
    t.subscribe((c) => other.push(c.toString()));
    t.start();
    await until('the first chunk', () => got.length === 1);
    off();
    appendFileSync(path, 'second\n');
    await t.close();
    expect(got).toEqual(['first\n']);
    expect(other.join('')).toBe('first\nsecond\n');
  });
});

describe('LogTailer timers and reads', () => {
  it('starts one poll timer however often it is started, none after close, and clears it on close', async () => {
    const path = file('x\n');
    const set = vi.spyOn(globalThis, 'setInterval');
    const clear = vi.spyOn(globalThis, 'clearInterval');
    const t = new LogTailer({ path, task: 'tm', watch: false, onLine: () => undefined });
    t.start();
    t.start();
    expect(set).toHaveBeenCalledTimes(1);
    const timer = set.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false); // never holds the process open
    await t.close();
    expect(clear).toHaveBeenCalledWith(timer);
    t.start();
    expect(set).toHaveBeenCalledTimes(1);

    const late = new LogTailer({ path, task: 'late', watch: false });
    await late.close();
    late.start();
    expect(set).toHaveBeenCalledTimes(1);
  });

  it('data noticed while a read is in flight is read right after it, without waiting for the timer', async () => {
    const path = file('a\n');
    const got: string[] = [];
    const t = new LogTailer({ path, task: 'again', watch: false, pollMs: 3_600_000 });
    let appended = false;
    t.subscribe((c) => {
      got.push(c.toString());
      if (!appended) {
        appended = true;
        appendFileSync(path, 'b\n'); // lands after this read; the poke asks for another
        t.poke();
      }
    });
    t.start();
    await until('the second chunk', () => got.join('') === 'a\nb\n');
    await t.close();
    expect(got.join('')).toBe('a\nb\n');
  });

  it('with fs.watch off and no timer tick, appended data waits for close', async () => {
    const path = file('one\n');
    const lines: string[] = [];
    const t = new LogTailer({
      path,
      task: 'nowatch',
      watch: false,
      pollMs: 3_600_000,
      onLine: (l) => lines.push(l.line),
    });
    t.start();
    await until('the first line', () => lines.length === 1);
    appendFileSync(path, 'two\n');
    // nothing should read it now: give a watcher (if one were made) ample chances to fire
    for (let i = 0; i < 30; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines).toEqual(['one']);
    await t.close();
    expect(lines).toEqual(['one', 'two']);
  });

  it('a log that does not exist yet is no error; one that cannot be opened is reported', async () => {
    const errors: Error[] = [];
    const missing = join(dir, 'later.log');
    const t = new LogTailer({
      path: missing,
      task: 'm',
      watch: false,
      pollMs: 20,
      onError: (e) => errors.push(e),
    });
    const lines: string[] = [];
    const t2 = new LogTailer({
      path: missing,
      task: 'm2',
      watch: false,
      pollMs: 20,
      onLine: (l) => lines.push(l.line),
      onError: (e) => errors.push(e),
    });
    t.start();
    t2.start();
    await new Promise((r) => setTimeout(r, 60));
    writeFileSync(missing, 'now\n');
    await until('the line of the late log', () => lines.length === 1);
    await t.close();
    await t2.close();
    expect(errors).toEqual([]);
    expect(lines).toEqual(['now']);

    const notDir = file('plain');
    const bad: Error[] = [];
    const b = new LogTailer({
      path: join(notDir, 'x.log'),
      task: 'b',
      watch: false,
      onLine: () => undefined,
      onError: (e) => bad.push(e),
    });
    await b.close();
    expect(bad).toHaveLength(1);
    expect((bad[0] as NodeJS.ErrnoException).code).toBe('ENOTDIR');

    const folder = join(dir, 'folder.log');
    mkdirSync(folder);
    const f: Error[] = [];
    const c = new LogTailer({
      path: folder,
      task: 'c',
      watch: false,
      onLine: () => undefined,
      onError: (e) => f.push(e),
    });
    await c.close();
    expect(f.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['EISDIR']);
  });
});

describe('LogTailer resources', () => {
  const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
  const fds = () => readdirSync('/proc/self/fd').length;

  it('its fs.watch hint never holds the process open, and it opens the log once', async () => {
    const path = file('a\n');
    const lines: string[] = [];
    const before = { watchers: watchers(), fds: fds() };
    const t = new LogTailer({ path, task: 'res', pollMs: 15, onLine: (l) => lines.push(l.line) });
    t.start();
    await until('the first line', () => lines.length === 1);
    for (const next of ['b', 'c', 'd']) {
      appendFileSync(path, `${next}\n`);
      await until(`line ${next}`, () => lines.at(-1) === next);
    }
    expect(watchers()).toBe(before.watchers);
    expect(fds()).toBeLessThanOrEqual(before.fds + 2); // the log and, at most, the watch's inotify fd
    await t.close();
    expect(fds()).toBeLessThanOrEqual(before.fds + 1);
    expect(lines).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('LogTailer console copy around skipped chunks', () => {
  const lineOf = (i: number) => `line ${String(i).padStart(4, '0')} end`; // 14 bytes: chunks end mid-line

  it('a skipped last chunk leaves no torn line behind at close, and `lines` counts what was shown', async () => {
    const text = Array.from({ length: 140 }, (_, i) => lineOf(i)).join('\n') + '\n';
    const path = file(text);
    const shown: string[] = [];
    let skipped = 0;
    let asked = 0;
    const chunks = Math.ceil(Buffer.byteLength(text) / 1024);
    const t = new LogTailer({
      path,
      task: 'sk',
      watch: false,
      chunkBytes: 1024,
      onLine: (l) => shown.push(l.line),
      skipLines: () => ++asked === chunks, // only the last chunk is skipped
      onSkipped: (k) => (skipped += k),
    });
    await t.close();
    for (const l of shown) expect(l).toMatch(/^line \d{4} end$/);
    expect(shown.length).toBeGreaterThan(0);
    expect(skipped).toBeGreaterThan(0);
    expect(t.lines).toBe(shown.length);
  });

  it('resuming inside a long line drops all of it, then shows whole lines again', async () => {
    const head = Array.from({ length: 100 }, (_, i) => lineOf(i)).join('\n') + '\n'; // 1500 bytes
    const long = 'L'.repeat(3000); // spans whole chunks with no newline
    const tail = Array.from({ length: 100 }, (_, i) => lineOf(100 + i)).join('\n') + '\n';
    const path = file(head + long + '\n' + tail);
    const shown: string[] = [];
    let skipped = 0;
    let asked = 0;
    const t = new LogTailer({
      path,
      task: 'long',
      watch: false,
      chunkBytes: 1024,
      onLine: (l) => shown.push(l.line),
      skipLines: () => ++asked === 2, // the second chunk: inside the head, before the long line
      onSkipped: (k) => (skipped += k),
    });
    await t.close();
    for (const l of shown) expect(l).toMatch(/^line \d{4} end$/);
    // the first line after the resume is shown: only the rest of the long line was dropped
    for (let i = 100; i < 200; i++) expect(shown).toContain(lineOf(i));
    expect(shown.length + skipped).toBe(201); // every line shown whole or counted, the long one too
    expect(t.lines).toBe(shown.length);
    expect(readFileSync(path).length).toBe(t.offset);
  });
});
