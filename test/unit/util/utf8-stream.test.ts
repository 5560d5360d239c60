import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Utf8Stream, completeUpTo } from '../../../src/util/utf8-stream.js';

function decodeInPieces(bytes: Buffer, cuts: number[]): string {
  const d = new Utf8Stream();
  let out = '';
  let prev = 0;
  for (const c of [...cuts.map((x) => x % (bytes.length + 1))].sort((a, b) => a - b).concat(bytes.length)) {
    out += d.write(bytes.subarray(prev, c));
    prev = c;
  }
  return out + d.end();
}

describe('Utf8Stream', () => {
  it('finds incomplete trailing sequences', () => {
    const euro = Buffer.from('€'); // e2 82 ac
    expect(completeUpTo(euro)).toBe(3);
    expect(completeUpTo(euro.subarray(0, 2))).toBe(0);
    expect(completeUpTo(Buffer.from([0x41, 0xf0, 0x9f, 0x98]))).toBe(1);
    expect(completeUpTo(Buffer.from([0x41, 0x80, 0x80, 0x80]))).toBe(4);
    expect(completeUpTo(Buffer.alloc(0))).toBe(0);
  });

  it('decodes characters split at every byte position', () => {
    const text = 'aé€😀日本 ✓';
    const bytes = Buffer.from(text);
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j++) expect(decodeInPieces(bytes, [i, j])).toBe(text);
    }
  });

  it('matches whole-buffer decoding for any bytes, valid or not, however split (property)', () => {
    const byte = fc.constantFrom(
      0x41,
      0x0a,
      0xc3,
      0xa9,
      0xe2,
      0x82,
      0xac,
      0xf0,
      0x9f,
      0x98,
      0x80,
      0xff,
      0xc0,
    );
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (bs, cuts) => {
        const bytes = Buffer.from(bs);
        expect(decodeInPieces(bytes, cuts)).toBe(bytes.toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });
});
