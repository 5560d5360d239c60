/**
 * A console that cannot keep up: while `skipLines` says so, the tailer counts whole chunks' lines
 * instead of splitting them, and resumes on a fresh line (no torn line is ever shown).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogTailer } from '../../../src/outputs/task-log.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-tail-skip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('LogTailer skipLines', () => {
  it('every line is either shown whole or counted as skipped', async () => {
    const path = join(dir, 'out.log');
    const N = 5000;
    writeFileSync(path, Array.from({ length: N }, (_, i) => `line ${i}`).join('\n') + '\n');
    const shown: string[] = [];
    let skipped = 0;
    let asked = 0;
    const t = new LogTailer({
      path,
      task: 't',
      watch: false,
      chunkBytes: 1024,
      onLine: (l) => shown.push(l.line),
      // skip chunks 2–5 and 9: both a run of skips and a single one
      skipLines: () => [2, 3, 4, 5, 9].includes(++asked),
      onSkipped: (n) => (skipped += n),
    });
    await t.close();
    expect(asked).toBeGreaterThan(9);
    expect(skipped).toBeGreaterThan(0);
    expect(shown.length + skipped).toBe(N);
    const nums = shown.map((l) => {
      expect(l).toMatch(/^line \d+$/);
      return Number(l.slice(5));
    });
    for (let i = 1; i < nums.length; i++) expect(nums[i]).toBeGreaterThan(nums[i - 1] ?? -1);
    expect(nums.at(-1)).toBe(N - 1);
  });
});
