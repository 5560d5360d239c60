import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConsoleLine } from '../../src/outputs/console-lines.js';
import { tailLog, type LogTailerOptions } from '../../src/outputs/task-log.js';
import { spawnGroup } from '../../src/util/process-group.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-tl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

/** Runs a bash script as a task writing into its log while a tailer follows it. */
async function runTask(script: string, extra: Partial<LogTailerOptions> = {}) {
  const n = ++seq;
  const log = join(dir, `task${n}.log`);
  const side = join(dir, `task${n}.side`);
  writeFileSync(log, '');
  const lines: ConsoleLine[] = [];
  const tailer = tailLog({ path: log, task: `task${n}`, onLine: (l) => lines.push(l), ...extra });
  const h = await spawnGroup({ argv: ['bash', '-c', script, side], logPath: log });
  const exit = await h.exited;
  return { log, side, lines, tailer, exit };
}

function countNewlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  return n;
}

async function until(what: string, cond: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('task log + tailer', () => {
  it('keeps 64 MB of output byte-exact and gives the console every line', async () => {
    // base64 of random bytes: 100-column lines; tee keeps a copy of exactly what was written
    const r = await runTask('head -c 48000000 /dev/urandom | base64 -w 100 | tee "$0"');
    expect(r.exit.code).toBe(0);
    await r.tailer.close();
    const size = statSync(r.log).size;
    expect(size).toBe(statSync(r.side).size);
    expect(size).toBeGreaterThan(64_000_000);
    expect(sha(r.log)).toBe(sha(r.side));
    const newlines = countNewlines(readFileSync(r.side));
    expect(r.lines.length).toBe(newlines);
    expect(r.tailer.lines).toBe(newlines);
    expect(r.tailer.offset).toBe(size);
    expect(r.lines.every((l) => l.line.length <= 100)).toBe(true);
  });

  it('keeps an 8 MB line without newline byte-exact, caps its console copy, and never holds it', async () => {
    const base = heapAfterGc();
    const r = await runTask(`head -c 8388608 /dev/zero | tr '\\0' x | tee "$0"; printf 'é' | tee -a "$0"`);
    await until('tailer caught up', () => r.tailer.offset === statSync(r.log).size);
    const held = heapAfterGc() - base; // the whole line has been read, nothing flushed yet
    expect(r.lines).toEqual([]);
    expect(held).toBeLessThan(4 * 1024 * 1024);
    await r.tailer.close();
    expect(sha(r.log)).toBe(sha(r.side));
    expect(r.lines).toHaveLength(1);
    const dropped = 8388608 + 1 - 2000;
    expect(r.lines[0].line).toBe('x'.repeat(2000) + ` …[+${dropped} chars]`);
    expect(r.lines[0].truncated).toBe(dropped);
  });

  it('shows \\r progress frames as separate lines, never glued, final frame kept', async () => {
    const r = await runTask(
      `for p in 10 50 90; do printf '%s%%\\r' $p; sleep 0.15; done; printf '100%%\\r'; sleep 0.15; printf '\\n'; printf 'done\\n'; printf 'a\\rb\\r'`,
    );
    await r.tailer.close();
    const shown = r.lines.map((l) => l.line);
    expect(shown.slice(-3)).toEqual(['100%', 'done', 'b']);
    for (const l of shown) expect(l).toMatch(/^(\d+%|done|b)$/);
    expect(shown.length).toBeGreaterThanOrEqual(4);
    expect(readFileSync(r.log, 'utf8')).toBe('10%\r50%\r90%\r100%\r\ndone\na\rb\r');
  });

  it('strips escape sequences from the console copy only', async () => {
    const r = await runTask(`printf '\\033[1;32mgreen\\033[0m text\\n\\033]0;title\\007plain\\n'`);
    await r.tailer.close();
    expect(r.lines.map((l) => l.line)).toEqual(['green text', 'plain']);
    expect(readFileSync(r.log, 'latin1')).toBe('\x1b[1;32mgreen\x1b[0m text\n\x1b]0;title\x07plain\n');
  });

  it('decodes multi-byte characters split across read chunks', async () => {
    const r = await runTask(`for i in 1 2 3; do printf '€%.0s' $(seq 1000); printf '😀\\n'; done`, {
      chunkBytes: 1024,
    });
    await r.tailer.close();
    expect(r.lines.map((l) => l.line)).toEqual(Array(3).fill('€'.repeat(1000) + '😀'));
  });

  it('hands raw chunks to subscribers, starting at a given offset', async () => {
    const log = join(dir, 'sub.log');
    writeFileSync(log, 'old attempt\n');
    const t = tailLog({ path: log, task: 'sub', startOffset: 12, chunkBytes: 1024 });
    const parts: Buffer[] = [];
    const offsets: number[] = [];
    t.subscribe((c, at) => {
      parts.push(c);
      offsets.push(at);
    });
    const payload = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    appendFileSync(log, payload);
    await t.close();
    expect(Buffer.concat(parts).equals(payload)).toBe(true);
    expect(offsets[0]).toBe(12);
    expect(t.offset).toBe(12 + payload.length);
  });

  it('follows a log created after it started', async () => {
    const log = join(dir, 'late.log');
    const lines: string[] = [];
    const t = tailLog({ path: log, task: 'late', onLine: (l) => lines.push(l.line) });
    await new Promise((r) => setTimeout(r, 30));
    writeFileSync(log, 'first\n');
    await until('first line', () => lines.length === 1);
    appendFileSync(log, 'second\n');
    await until('second line', () => lines.length === 2);
    appendFileSync(log, 'partial');
    await t.close();
    expect(lines).toEqual(['first', 'second', 'partial']);
  });

  // new output is noticed while following (not only at close), by each mechanism on its own;
  // how quickly is measured in bench/, never asserted here
  it('notices appended lines through fs.watch alone (poll timer effectively off)', async () => {
    const log = join(dir, 'watched.log');
    writeFileSync(log, 'first\n');
    const lines: string[] = [];
    const t = tailLog({ path: log, task: 'w', pollMs: 3_600_000, onLine: (l) => lines.push(l.line) });
    await until('first line', () => lines.length === 1);
    appendFileSync(log, 'second\n');
    await until('second line', () => lines.length === 2);
    await t.close();
    expect(lines).toEqual(['first', 'second']);
  });

  it('notices appended lines through the poll timer alone (fs.watch off)', async () => {
    const log = join(dir, 'polled.log');
    writeFileSync(log, 'first\n');
    const lines: string[] = [];
    const t = tailLog({ path: log, task: 'p', watch: false, pollMs: 20, onLine: (l) => lines.push(l.line) });
    await until('first line', () => lines.length === 1);
    appendFileSync(log, 'second\n');
    await until('second line', () => lines.length === 2);
    await t.close();
    expect(lines).toEqual(['first', 'second']);
  });

  it('reads nothing when nobody consumes the output', async () => {
    const log = join(dir, 'idle.log');
    writeFileSync(log, 'data\n');
    const t = tailLog({ path: log, task: 'idle' });
    await t.close();
    expect(t.offset).toBe(0);
  });
});
