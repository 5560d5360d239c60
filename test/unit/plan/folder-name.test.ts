import { join, dirname } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childPath, folderName, MAX_FOLDER_NAME_BYTES } from '../../../src/plan/folder-name.js';

const ROOT = '/out/root';

describe('folderName', () => {
  it('keeps names that are already safe', () => {
    for (const n of ['server', 'client_0', 'bench_a_b', 'Ünïcode-名前', 'a..b'])
      expect(folderName(n)).toBe(n);
  });

  it('never leaves the parent folder: ../../../x, ., .., hidden names', () => {
    for (const n of ['../../../x', '..', '.', '.hidden', '/etc/passwd', 'a\\..\\b']) {
      const f = folderName(n);
      expect(f, n).not.toMatch(/[/\\]/);
      expect(f.startsWith('.'), n).toBe(false);
      expect(dirname(join(ROOT, f))).toBe(ROOT);
    }
    expect(folderName('../../../x')).toMatch(/^___\.\._\.\._x-[0-9a-f]{8}$/);
  });

  it('replaces NUL, newlines and other control characters, with a stable hash suffix', () => {
    const f = folderName('a\nb\0c\u2028d\x7f');
    expect(f).toMatch(/^a_b_c_d_-[0-9a-f]{8}$/);
    expect(folderName('a\nb\0c\u2028d\x7f')).toBe(f); // stable
    expect(folderName('a/b')).not.toBe(folderName('a_b')); // no collision with a name that is already safe
    expect(folderName('a/b')).not.toBe(folderName('a\\b'));
  });

  it('limits the length in bytes without splitting a character', () => {
    const long = '名'.repeat(200);
    const f = folderName(long);
    expect(Buffer.byteLength(f)).toBeLessThanOrEqual(MAX_FOLDER_NAME_BYTES);
    expect(f).toMatch(/^名+-[0-9a-f]{8}$/);
    expect(folderName('x'.repeat(500))).toHaveLength(MAX_FOLDER_NAME_BYTES);
  });

  it('holds for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
        const f = folderName(s);
        expect(f.length).toBeGreaterThan(0);
        expect(Buffer.byteLength(f)).toBeLessThanOrEqual(MAX_FOLDER_NAME_BYTES);
        expect(f).not.toMatch(/[/\\\p{Cc}\u2028\u2029]/u);
        expect(f.startsWith('.')).toBe(false);
        expect(dirname(join(ROOT, f))).toBe(ROOT);
        expect(folderName(s)).toBe(f);
      }),
    );
  });

  it('childPath(dir)(folder) is join(dir, folder), also with a suffix, for any folder name (property)', () => {
    const dir = fc.oneof(
      fc.constantFrom('/', '', '.', '..', '/a/b/', '/a//b/./c/..', 'rel/x', '/tmp/run-1'),
      fc.array(fc.constantFrom('a', 'b', '.', '..', '', 'ü n'), { maxLength: 5 }).map((p) => p.join('/')),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(dir, fc.string({ unit: 'binary', maxLength: 200 }), (d, name) => {
        const f = folderName(name);
        const inDir = childPath(d);
        expect(inDir(f)).toBe(join(d, f));
        expect(inDir(`${f}.log`)).toBe(join(d, `${f}.log`));
        // and one level down, as the plan makes a task's log and result paths
        expect(`${inDir(f)}/result.json`).toBe(join(inDir(f), 'result.json'));
      }),
      { numRuns: 500 },
    );
  });
});
