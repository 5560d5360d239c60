/**
 * Every case of ../shared/compat/cases.txt (recipes from the original tool's repository, read in
 * place, never copied) dry-runs as listed: `ok` exits 0 with a complete plan, `error` fails with
 * a located error and no stack trace.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { hasStackTrace, SHARED, sflow } from '../helpers/cli.js';

const COMPAT = join(SHARED, 'compat');

interface Case {
  id: string;
  expected: 'ok' | 'error';
  args: string[];
}

function readCases(): Case[] {
  const text = readFileSync(join(COMPAT, 'cases.txt'), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const [id, expected, args] = l.split('|').map((x) => x.trim());
      return { id, expected: expected as Case['expected'], args: args.split(/\s+/) };
    });
}

describe('compat recipes dry-run as listed in cases.txt', () => {
  it('finds the compat folder and all of its cases', () => {
    expect(existsSync(COMPAT)).toBe(true);
    expect(readCases().length).toBeGreaterThanOrEqual(56);
  });

  const cases = existsSync(COMPAT) ? readCases() : [];
  const out = scratchDir('sflow-compat-');
  it.each(cases.map((c, i) => [`${i + 1}:${c.id}`, c] as const))('%s', (_label, c) => {
    const r = sflow(['run', ...c.args, '--dry-run', '--skip-artifact-check', '--output-dir', out], {
      cwd: COMPAT,
    });
    if (c.expected === 'ok') {
      expect(r.stderr).not.toMatch(/Configuration error|Internal error/);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('Configuration is valid');
      const name = /Dry-run complete: (\S+)/.exec(r.stdout)?.[1];
      expect(name).toBeTruthy();
      expect(r.stdout).toMatch(/Task plan:/);
      expect(r.stdout).toMatch(/command: /);
    } else {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/✗ .*error/i);
      expect(r.stderr).toMatch(/\.yaml:\d+:\d+/);
      expect(hasStackTrace(r.stderr)).toBe(false);
    }
    // a dry-run creates nothing
    expect(readdirSync(out)).toEqual([]);
  });
});
