import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { forEachLine } from '../../../src/outputs/line-reader.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function lines(content: string | Buffer, opts: { chunkBytes?: number; maxLineChars?: number } = {}) {
  const p = join(dir, `f${++n}`);
  writeFileSync(p, content);
  const out: string[] = [];
  await forEachLine(p, (l) => void out.push(l), opts);
  return out;
}

/** Python's str.splitlines() restricted to \n, \r\n, \r */
function reference(s: string): string[] {
  const out = s.split(/\r\n|\r|\n/);
  if (out[out.length - 1] === '') out.pop();
  return out;
}

describe('forEachLine', () => {
  it('splits on \\n, \\r\\n and \\r, keeps empty lines, handles a missing final newline', async () => {
    expect(await lines('a\nb\r\nc\rd')).toEqual(['a', 'b', 'c', 'd']);
    expect(await lines('\n\nx\n')).toEqual(['', '', 'x']);
    expect(await lines('')).toEqual([]);
  });

  it('a \\r\\n split across chunks is one break; UTF-8 split across chunks is decoded', async () => {
    expect(await lines('ab\r\ncd', { chunkBytes: 3 })).toEqual(['ab', 'cd']);
    expect(await lines('héllo wörld\n', { chunkBytes: 2 })).toEqual(['héllo wörld']);
  });

  it('cuts overlong lines without buffering them', async () => {
    expect(await lines('x'.repeat(100) + '\nshort\n', { maxLineChars: 10, chunkBytes: 7 })).toEqual([
      'x'.repeat(10),
      'short',
    ]);
  });

  it('matches the reference splitter for any text and chunk size (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[ab\r\n]{0,40}$/),
        fc.integer({ min: 1, max: 9 }),
        async (s, chunk) => {
          expect(await lines(s, { chunkBytes: chunk })).toEqual(reference(s));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('can stop early', async () => {
    const p = join(dir, 'early');
    writeFileSync(p, 'a\nb\nc\n');
    const seen: string[] = [];
    const count = await forEachLine(p, (l) => {
      seen.push(l);
      return l !== 'b';
    });
    expect(seen).toEqual(['a', 'b']);
    expect(count).toBe(2);
  });
});
