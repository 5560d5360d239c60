/**
 * The invalid-recipe corpus (test/fixtures/invalid): every case fails with the expected message,
 * at the marked location (`#@` at the end of the line the error must point at), with a clear exit
 * code and no stack trace. Header lines: `# expect: <text>`, optional `# args: <extra CLI args>`,
 * `# exit: <code>`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { hasStackTrace, REPO, sflow } from '../helpers/cli.js';

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

  const out = scratchDir('sflow-invalid-');
  it.each(fixtures.map((f) => [f.file, f] as const))('%s', (_name, f) => {
    const r = sflow(['run', '-f', f.file, '--dry-run', '--output-dir', out, ...f.args], { cwd: DIR });
    const text = r.stderr + r.stdout;
    expect(r.code, text).toBe(f.exit);
    expect(text.toLowerCase()).toContain(f.expect.toLowerCase());
    expect(r.stderr).toMatch(/^✗ /m);
    expect(hasStackTrace(text), text).toBe(false);
    expect(text).not.toContain('Internal error');
    if (f.line !== undefined) expect(text, text).toContain(`${f.file}:${f.line}:`);
  });
});
