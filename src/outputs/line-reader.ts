/**
 * Streams a (possibly huge) log file line by line with Python's universal-newline rule:
 * `\n`, `\r\n` and `\r` each end a line. Memory stays bounded: the file is read in chunks
 * and a line longer than `maxLineChars` is cut (the rest of it is skipped, not buffered).
 */
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

export interface LineReadOptions {
  /** characters kept per line (default 1 MiB); longer lines are cut */
  maxLineChars?: number;
  chunkBytes?: number;
}

/** Return `false` to stop reading early. */
export type LineCallback = (line: string, lineNo: number) => void | boolean;

export const DEFAULT_MAX_LINE_CHARS = 1 << 20;

/** Reads `path` and calls `onLine` for each line (1-based numbers). Returns the line count. */
export async function forEachLine(
  path: string,
  onLine: LineCallback,
  opts: LineReadOptions = {},
): Promise<number> {
  const max = opts.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  const size = opts.chunkBytes ?? 1 << 20;
  const fh = await open(path, 'r');
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.allocUnsafe(size);
  let parts: string[] = [];
  let partLen = 0;
  let lineNo = 0;
  let pendingCR = false;
  let stopped = false;

  const add = (s: string) => {
    if (partLen >= max || s.length === 0) return;
    const piece = s.length > max - partLen ? s.slice(0, max - partLen) : s;
    parts.push(piece);
    partLen += piece.length;
  };
  const endLine = () => {
    const line = parts.length === 1 ? parts[0] : parts.join('');
    parts = [];
    partLen = 0;
    lineNo++;
    if (onLine(line, lineNo) === false) stopped = true;
  };
  const push = (text: string) => {
    let i = 0;
    if (pendingCR && text.length > 0) {
      if (text.charCodeAt(0) === 10) i = 1;
      pendingCR = false;
    }
    const n = text.length;
    while (i < n && !stopped) {
      let j = i;
      // scan to the next line break
      for (; j < n; j++) {
        const c = text.charCodeAt(j);
        if (c === 10 || c === 13) break;
      }
      add(text.slice(i, j));
      if (j >= n) return;
      endLine();
      if (text.charCodeAt(j) === 13) {
        if (j + 1 < n) {
          if (text.charCodeAt(j + 1) === 10) j++;
        } else pendingCR = true;
      }
      i = j + 1;
    }
  };

  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, size, null);
      if (bytesRead === 0) break;
      push(decoder.write(buf.subarray(0, bytesRead)));
      if (stopped) return lineNo;
    }
    push(decoder.end());
    if (!stopped && partLen > 0) endLine();
    return lineNo;
  } finally {
    await fh.close();
  }
}
