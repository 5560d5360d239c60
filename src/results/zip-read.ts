/**
 * Reads named entries of a zip held in memory: the archive `workflow.upload_all` uploads (yazl:
 * stored or deflated entries, zip64 records when large). Only the central directory is trusted
 * for names and offsets; an entry is inflated only when asked for.
 */
import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  method: number;
  compressed: number;
  size: number;
  /** offset of the local header */
  offset: number;
}

const EOCD = 0x06054b50;
const EOCD64 = 0x06064b50;
const EOCD64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export class ZipFormatError extends Error {}

function findEocd(buf: Buffer): number {
  const stop = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= stop; i--) if (buf.readUInt32LE(i) === EOCD) return i;
  throw new ZipFormatError('not a zip archive (no end-of-central-directory record)');
}

/** Where the central directory starts and how many entries it has (zip64 aware). */
function directory(buf: Buffer): { start: number; count: number } {
  const e = findEocd(buf);
  let count = buf.readUInt16LE(e + 10);
  let start = buf.readUInt32LE(e + 16);
  if ((count === 0xffff || start === 0xffffffff) && e >= 20 && buf.readUInt32LE(e - 20) === EOCD64_LOCATOR) {
    const at = Number(buf.readBigUInt64LE(e - 20 + 8));
    if (buf.readUInt32LE(at) !== EOCD64) throw new ZipFormatError('broken zip64 end record');
    count = Number(buf.readBigUInt64LE(at + 32));
    start = Number(buf.readBigUInt64LE(at + 48));
  }
  return { start, count };
}

/** Sizes and offset from a zip64 extra field where the 32-bit fields are saturated. */
function zip64(buf: Buffer, extra: number, extraLen: number, e: ZipEntry): void {
  let p = extra;
  while (p + 4 <= extra + extraLen) {
    const id = buf.readUInt16LE(p);
    const len = buf.readUInt16LE(p + 2);
    if (id === 0x0001) {
      let q = p + 4;
      for (const k of ['size', 'compressed', 'offset'] as const)
        if (e[k] === 0xffffffff) {
          e[k] = Number(buf.readBigUInt64LE(q));
          q += 8;
        }
      return;
    }
    p += 4 + len;
  }
}

export function zipEntries(buf: Buffer): Map<string, ZipEntry> {
  const { start, count } = directory(buf);
  const out = new Map<string, ZipEntry>();
  let p = start;
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CENTRAL)
      throw new ZipFormatError(`broken central directory at entry ${i + 1}`);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const e: ZipEntry = {
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
      method: buf.readUInt16LE(p + 10),
      compressed: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      offset: buf.readUInt32LE(p + 42),
    };
    zip64(buf, p + 46 + nameLen, extraLen, e);
    out.set(e.name, e);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

export function zipEntryData(buf: Buffer, e: ZipEntry): Buffer {
  if (buf.readUInt32LE(e.offset) !== LOCAL) throw new ZipFormatError(`${e.name}: broken local header`);
  const data = e.offset + 30 + buf.readUInt16LE(e.offset + 26) + buf.readUInt16LE(e.offset + 28);
  const raw = buf.subarray(data, data + e.compressed);
  if (e.method === 0) return Buffer.from(raw);
  if (e.method === 8) return inflateRawSync(raw);
  throw new ZipFormatError(`${e.name}: compression method ${e.method} is not supported`);
}
