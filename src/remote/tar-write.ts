/**
 * A small streaming tar writer (ustar, GNU long names): how files cross the SSH connection in both
 * directions — the recipe and its inputs up (`tar -xf -` remotely), the run's files back (the
 * remote sflow writes, `tar -xf -` locally). Regular files only (symbolic links are followed);
 * each file is streamed, never held in memory whole. Directories are implied by the paths. An
 * entry may instead carry its bytes (`data`): what must not be left in a local file, such as the
 * composed recipe with secret values in it, crosses the connection from memory (mode 0600).
 */
import { createReadStream, statSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

export type TarEntry =
  | {
      /** `/`-separated path inside the archive */
      name: string;
      /** the file to read */
      file: string;
    }
  | {
      name: string;
      /** the bytes themselves (written with mode 0600, mtime now) */
      data: Buffer;
    };

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mode: number, mtime: number, type: string): Buffer {
  const b = Buffer.alloc(512);
  b.write(name.slice(0, 100), 0, 'utf8');
  b.write(octal(mode & 0o7777, 8), 100);
  b.write(octal(0, 8), 108);
  b.write(octal(0, 8), 116);
  b.write(octal(size, 12), 124);
  b.write(octal(Math.floor(mtime), 12), 136);
  b.write('        ', 148);
  b.write(type, 156);
  b.write('ustar  \0', 257); // GNU magic: long names via ././@LongLink
  let sum = 0;
  for (const x of b) sum += x;
  b.write(octal(sum, 7) + ' ', 148);
  return b;
}

async function put(out: Writable, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

/** Writes the archive to `out` (not ended); returns the number of bytes of file data. */
export async function writeTar(out: Writable, entries: TarEntry[]): Promise<number> {
  let total = 0;
  for (const e of entries) {
    const st = 'file' in e ? statSync(e.file) : undefined;
    if (st?.isFile() === false) continue;
    const name = Buffer.from(e.name, 'utf8');
    if (name.length > 100) {
      await put(out, header('././@LongLink', name.length + 1, 0o644, 0, 'L'));
      await put(out, Buffer.concat([name, Buffer.from([0]), pad(name.length + 1)]));
    }
    if ('data' in e) {
      await put(out, header(e.name, e.data.length, 0o600, Date.now() / 1000, '0'));
      if (e.data.length) await put(out, e.data);
      await put(out, pad(e.data.length));
      total += e.data.length;
      continue;
    }
    if (!st) continue;
    await put(out, header(e.name, st.size, st.mode, st.mtimeMs / 1000, '0'));
    let written = 0;
    for await (const chunk of createReadStream(e.file, { end: Math.max(0, st.size - 1) })) {
      const c = chunk as Buffer;
      // a file that grows while we read (a live log) is cut at the size in its header
      const take = c.subarray(0, Math.max(0, st.size - written));
      if (take.length) await put(out, take);
      written += take.length;
      if (written >= st.size) break;
    }
    // a file that shrank meanwhile is padded to the size announced
    if (written < st.size) await put(out, Buffer.alloc(st.size - written));
    await put(out, pad(st.size));
    total += st.size;
  }
  await put(out, Buffer.alloc(1024));
  return total;
}
