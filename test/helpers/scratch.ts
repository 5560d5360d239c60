/**
 * Scratch folders for tests, removed after the test file (every folder this file's tests asked
 * for, whether they passed or not). Use it instead of a bare `mkdtempSync(os.tmpdir())`:
 * test/global-setup.ts fails the run when anything is left in the temp folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** a new empty folder `<tmp>/<prefix>XXXXXX`, removed after this test file */
export function scratchDir(prefix = 'sflow-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}
