/**
 * The files a single executable carries (assets/, uPlot, a font, resvg's native addon) as one
 * blob: a 4-byte little-endian header length, a JSON header listing every file (path, mode,
 * offset, size), then the files' bytes. `packPayload` runs at build time
 * (scripts/build-exe.mjs), `unpackPayload` on the first start of the executable.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';

export interface PayloadFile {
  /** `/`-separated path relative to the unpack folder */
  path: string;
  data: Buffer;
  mode: number;
}

interface HeaderEntry {
  p: string;
  m: number;
  o: number;
  s: number;
}

export function packPayload(files: PayloadFile[]): Buffer {
  let offset = 0;
  const entries: HeaderEntry[] = files.map((f) => {
    const e = { p: f.path, m: f.mode, o: offset, s: f.data.length };
    offset += f.data.length;
    return e;
  });
  const header = Buffer.from(JSON.stringify(entries), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length, 0);
  return Buffer.concat([len, header, ...files.map((f) => f.data)]);
}

/** Writes every file of the payload under `dir` (which must exist); returns how many. */
export function unpackPayload(payload: Uint8Array, dir: string): number {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const headerLen = buf.readUInt32LE(0);
  const entries = JSON.parse(buf.subarray(4, 4 + headerLen).toString('utf8')) as HeaderEntry[];
  const base = 4 + headerLen;
  for (const e of entries) {
    const rel = normalize(e.p);
    if (rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`bad payload path ${e.p}`);
    const target = join(dir, rel);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, buf.subarray(base + e.o, base + e.o + e.s), { mode: e.m });
  }
  return entries.length;
}
