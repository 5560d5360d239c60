/**
 * Every case of ../shared/compat/cases.txt (recipes from the original tool's repository, read in
 * place, never copied) dry-runs as listed: `ok` exits 0 with a complete plan, `error` fails with
 * a located error and no stack trace. The cases run through the CLI's entry in-process; the first
 * one also runs the built CLI in a child process as the end-to-end check. Skipped (named) when
 * ../shared is absent.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hasStackTrace, sflow, type CliResult } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

const COMPAT = sharedPath('compat');

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

describeWithShared('compat', 'compat recipes dry-run as listed in cases.txt', () => {
  const cases = readCases();
  it('finds all of its cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(56);
  });

  const out = mkdtempSync(join(tmpdir(), 'sflow-compat-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const args = (c: Case) => ['run', ...c.args, '--dry-run', '--skip-artifact-check', '--output-dir', out];

  function check(c: Case, r: CliResult): void {
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
  }

  it.each(cases.map((c, i) => [`${i + 1}:${c.id}`, c] as const))('%s', async (_label, c) => {
    check(c, await sflowInProcess(args(c), { cwd: COMPAT }));
  });

  it('end to end: the built CLI in a child process plans the first case the same way', () => {
    check(cases[0], sflow(args(cases[0]), { cwd: COMPAT }));
  });
});
