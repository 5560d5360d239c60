/**
 * `workflow.upload_all`'s archive: every regular file under the run directory, paths relative to
 * it, deflated into one zip (zip64 when needed) by yazl. Each file is read up to the size it had
 * when the directory was walked, so logs still being appended to are archived consistently.
 */
import { createReadStream, createWriteStream, lstatSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

interface Entry {
  path: string;
  rel: string;
  size: number;
  mtime: Date;
  mode: number;
}

function walk(root: string): Entry[] {
  const out: Entry[] = [];
  const visit = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) {
        const st = lstatSync(p);
        out.push({
          path: p,
          rel: relative(root, p).split(sep).join('/'),
          size: st.size,
          mtime: st.mtime,
          mode: st.mode,
        });
      }
    }
  };
  visit(root);
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

/** Writes the zip of `root` to `zipPath`; returns the number of files archived. */
export async function zipDirectory(root: string, zipPath: string, signal: AbortSignal): Promise<number> {
  const files = walk(root);
  const zip = new yazl.ZipFile();
  for (const f of files) {
    const opts = { mtime: f.mtime, mode: f.mode, size: f.size };
    if (f.size === 0) zip.addBuffer(Buffer.alloc(0), f.rel, { mtime: f.mtime, mode: f.mode });
    else
      zip.addReadStreamLazy(f.rel, opts, (cb) =>
        cb(null, createReadStream(f.path, { start: 0, end: f.size - 1 })),
      );
  }
  // yazl reports a file that vanished on the ZipFile, not on its stream: end the stream with it
  zip.on('error', (e: Error) => (zip.outputStream as unknown as { destroy(e: Error): void }).destroy(e));
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath), { signal });
  return files.length;
}
