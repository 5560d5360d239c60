/**
 * Every unbounded input of issue 9 (test/fixtures/hostile/cases.ts) through the real CLI, in a
 * child whose JavaScript heap is capped at 256 MB: a located error (`file:line:col`), never a
 * stack trace or an out-of-memory crash — or, for 5,000 chained variables, a plan. Time and peak
 * RSS are measured by bench/bounded-inputs.ts, not asserted here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTILE_CASES } from '../fixtures/hostile/cases.js';
import { hasStackTrace, sflow } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('sflow-hostile-');

describe('every input is bounded', () => {
  it.each(HOSTILE_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const file = `${c.name}.yaml`;
    writeFileSync(join(dir, file), c.yaml());
    const r = sflow(['run', '-f', file, '--dry-run'], {
      cwd: dir,
      env: { ...c.env, NODE_OPTIONS: '--max-old-space-size=256' },
      timeoutMs: 60_000,
    });
    const text = r.stderr + r.stdout;
    expect(text).not.toContain('heap out of memory');
    expect(hasStackTrace(text), text.slice(0, 2000)).toBe(false);
    if (c.error === null) {
      expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
      return;
    }
    expect(r.code, text.slice(0, 2000)).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^✗ [^:]+: ${c.name.replace(/[\^$.*+?()[\]{}|\\]/g, '\\$&')}\\.yaml:\\d+:\\d+: `, 'm'),
    );
    expect(r.stderr).toContain(c.error);
  });
});
