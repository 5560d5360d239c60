/**
 * The last lines of a task log for the log pane: at most `maxBytes` read from the end (so a
 * 200 MB log costs the same as a small one), terminal escapes removed, `\r` redraws collapsed
 * to what a terminal would show, tabs expanded.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { stripAnsi } from '../../util/ansi.js';

export interface LogTail {
  lines: string[];
  /** size of the log when read (bytes) */
  size: number;
}

export const TAIL_BYTES = 64 * 1024;

export function readLogTail(path: string, opts: { endAt?: number; maxBytes?: number } = {}): LogTail {
  if (!path) return { lines: [], size: 0 };
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { lines: [], size: 0 };
  }
  try {
    const size = fstatSync(fd).size;
    const end = Math.min(opts.endAt ?? size, size);
    const len = Math.min(end, opts.maxBytes ?? TAIL_BYTES);
    const buf = Buffer.alloc(len);
    const n = len ? readSync(fd, buf, 0, len, end - len) : 0;
    let text = buf.toString('utf8', 0, n);
    // started mid-file: the first (partial) line is dropped
    if (end - len > 0) text = text.slice(text.indexOf('\n') + 1);
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return { lines: lines.map(screenLine), size };
  } finally {
    closeSync(fd);
  }
}

/** What a terminal shows for one line: the text after the last carriage return, no escapes. */
export function screenLine(raw: string): string {
  let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const cr = line.lastIndexOf('\r');
  if (cr >= 0) line = line.slice(cr + 1);
  return stripAnsi(line).replace(/\t/g, '    ');
}

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
