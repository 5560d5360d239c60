/**
 * Appending one record to a JSON-lines ledger so that it is there whole or not at all: a disk that
 * fills in the middle of a line makes `write` return short and the next one fail (ENOSPC); the
 * bytes of the partial line are then cut off again (ftruncate), so a later record, once the disk
 * has room, does not follow a torn line. The error is rethrown for the caller to report.
 */
import { fstatSync, ftruncateSync, writeSync } from 'node:fs';

export function appendWholeLine(fd: number, line: string): void {
  const buf = Buffer.from(line.endsWith('\n') ? line : `${line}\n`, 'utf8');
  let done = 0;
  try {
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
  } catch (e) {
    if (done > 0) {
      try {
        ftruncateSync(fd, Math.max(0, fstatSync(fd).size - done));
      } catch {
        // nothing more can be done; the reader skips a torn last line
      }
    }
    throw e;
  }
}
