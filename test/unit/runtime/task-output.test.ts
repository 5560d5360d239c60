import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TaskOutputFollower } from '../../../src/reporters/task-output.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-follow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(fn: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('TaskOutputFollower', () => {
  it('streams lines of a task that writes while it runs, and the rest at finish', async () => {
    const lines: string[] = [];
    const f = new TaskOutputFollower((l) => lines.push(`${l.task}:${l.line}`));
    const p = join(dir, 'a.log');
    writeFileSync(p, '');
    f.follow('a', p);
    appendFileSync(p, 'one\n');
    await until(() => lines.length === 1);
    appendFileSync(p, 'two\nthree');
    await f.finish('a');
    expect(lines).toEqual(['a:one', 'a:two', 'a:three']);
  });

  it('a task that finishes before its output was noticed still shows it; a silent one shows nothing', async () => {
    const lines: string[] = [];
    const f = new TaskOutputFollower((l) => lines.push(l.line), 5);
    const loud = join(dir, 'loud.log');
    const silent = join(dir, 'silent.log');
    writeFileSync(loud, '');
    writeFileSync(silent, '');
    f.follow('loud', loud);
    f.follow('silent', silent);
    appendFileSync(loud, 'abcdefghij\n');
    expect(f.finish('silent')).toBeUndefined();
    await f.finish('loud');
    expect(lines).toEqual(['abcde …[+5 chars]']);
    await f.closeAll();
  });
});
