/**
 * The invalid-recipe corpus (test/fixtures/invalid): every case fails with the expected message,
 * at the marked location (`#@` at the end of the line the error must point at), with a clear exit
 * code and no stack trace. Header lines: `# expect: <text>`, optional `# args: <extra CLI args>`,
 * `# exit: <code>`. Every case runs through the CLI's entry in-process; one case also runs the
 * built CLI in a child process as the end-to-end check.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, REPO, sflow, type CliResult } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';

const DIR = join(REPO, 'test', 'fixtures', 'invalid');

interface Fixture {
  file: string;
  expect: string;
  args: string[];
  exit: number;
  line?: number;
}

function readFixture(file: string): Fixture {
  const text = readFileSync(join(DIR, file), 'utf8');
  const header = (key: string): string | undefined =>
    new RegExp(`^# ${key}: (.*)$`, 'm').exec(text)?.[1].trim();
  const lines = text.split('\n');
  const marked = lines.findIndex((l) => /#@\s*$/.test(l));
  const explicitLine = header('expect-line');
  return {
    file,
    expect: header('expect') ?? '',
    args: header('args')?.split(/\s+/) ?? [],
    exit: Number(header('exit') ?? 1),
    line: marked >= 0 ? marked + 1 : explicitLine ? Number(explicitLine) : undefined,
  };
}

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map(readFixture);

describe('invalid-recipe corpus', () => {
  it('has at least 60 cases, each with an expectation', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(60);
    for (const f of fixtures) expect(f.expect, f.file).not.toBe('');
  });

  const out = mkdtempSync(join(tmpdir(), 'sflow-invalid-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const args = (f: Fixture) => ['run', '-f', f.file, '--dry-run', '--output-dir', out, ...f.args];

  function check(f: Fixture, r: CliResult): void {
    const text = r.stderr + r.stdout;
    expect(r.code, text).toBe(f.exit);
    expect(text.toLowerCase()).toContain(f.expect.toLowerCase());
    expect(r.stderr).toMatch(/^✗ /m);
    expect(hasStackTrace(text), text).toBe(false);
    expect(text).not.toContain('Internal error');
    if (f.line !== undefined) expect(text, text).toContain(`${f.file}:${f.line}:`);
    // a failed dry-run creates nothing
    expect(readdirSync(out)).toEqual([]);
  }

  it.each(fixtures.map((f) => [f.file, f] as const))('%s', async (_name, f) => {
    check(f, await sflowInProcess(args(f), { cwd: DIR }));
  });

  it('end to end: the built CLI in a child process reports a case the same way', () => {
    const f = fixtures.find((x) => x.file.startsWith('v05-unknown-task-key'))!;
    check(f, sflow(args(f), { cwd: DIR }));
  });
});
