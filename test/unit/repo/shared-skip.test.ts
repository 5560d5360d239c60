/**
 * A fresh clone has no `../shared`: tests that read it skip with one line naming what is missing,
 * and CI (.ci/run) sets SFLOW_REQUIRE_SHARED=1 so the absence fails there instead.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';
import { SHARED, sharedMissing } from '../../helpers/shared.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? testFiles(p) : /\.ts$/.test(e) ? [p] : [];
  });
}

describe('tests that need ../shared', () => {
  it('find it next to the repository, not at a fixed machine path', () => {
    // (SFLOW_SHARED_DIR: the mutation runs' sandbox copy of the repository points back to it)
    expect(SHARED).toBe(process.env.SFLOW_SHARED_DIR || resolve(REPO, '..', 'shared'));
    const hardCoded = testFiles(join(REPO, 'test')).filter((f) =>
      readFileSync(f, 'utf8').includes(['', 'work', 'shared'].join('/')),
    );
    expect(hardCoded).toEqual([]);
  });

  it('say what is missing and where they looked', () => {
    const why = sharedMissing('no/such/folder');
    expect(why).toBe(`needs ../shared/no/such/folder (not found at ${join(SHARED, 'no/such/folder')})`);
  });

  it('.ci/run makes a missing ../shared a failure (SFLOW_REQUIRE_SHARED=1) and still checks for it', () => {
    const ci = readFileSync(join(REPO, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^export SFLOW_REQUIRE_SHARED=1$/m);
    expect(ci).toContain('[ ! -d ../shared/compat ]');
    expect(ci.indexOf('SFLOW_REQUIRE_SHARED=1')).toBeLessThan(ci.indexOf('npm test'));
  });
});
