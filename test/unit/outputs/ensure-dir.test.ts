/** Folder creation is bounded: one try per path component, a clear error, nothing left behind. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { ensureDir, removeCreated } from '../../../src/outputs/ensure-dir.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-ensure-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function error(fn: () => unknown): SflowError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SflowError) return e;
    throw e;
  }
  throw new Error('expected an error');
}

describe('ensureDir', () => {
  it('creates missing parents and reports what it created, outermost first', () => {
    const target = join(root, 'a', 'b', 'c');
    expect(ensureDir(target)).toEqual([join(root, 'a'), join(root, 'a', 'b'), target]);
    expect(ensureDir(target)).toEqual([]);
    removeCreated([join(root, 'a'), join(root, 'a', 'b'), target]);
    expect(existsSync(join(root, 'a'))).toBe(false);
  });

  it('a file in the way is a usage error naming it', () => {
    writeFileSync(join(root, 'file'), 'x');
    const e = error(() => ensureDir(join(root, 'file', 'sub'), { what: 'output folder' }));
    expect(e.phase).toBe('usage');
    expect(e.message).toBe(
      `cannot create the output folder ${join(root, 'file', 'sub')}: ${join(root, 'file')} exists and is not a folder`,
    );
  });

  it.runIf(existsSync('/proc/self'))(
    'under /proc it fails at once (recursive mkdir spins there) and leaves nothing',
    () => {
      const e = error(() =>
        ensureDir('/proc/sflow-test/x/y', { what: 'run folder', phase: 'run', hint: 'elsewhere' }),
      );
      expect(e.message).toBe(
        'cannot create the run folder /proc/sflow-test/x/y: the file system at /proc does not allow creating folders there (ENOENT)',
      );
      expect(e.hint).toBe('elsewhere');
      expect(e.phase).toBe('run');
    },
  );
});
