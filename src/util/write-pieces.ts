/**
 * Writing a long text that is produced in pieces (the dry-run of 10,000 replicas): each piece is
 * written as it comes and the next one waits for the stream to drain, so at most about one piece
 * is buffered whatever the reader's speed. A stream that closes or fails ends the writing early
 * (its 'error' is the owner's to report: `sflow` exits quietly on EPIPE).
 */
import type { Writable } from 'node:stream';

export async function writePieces(out: Writable, pieces: Iterable<string>): Promise<void> {
  for (const piece of pieces) {
    if (out.destroyed || out.writableEnded) return;
    if (!out.write(piece)) await drained(out);
  }
}

function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
  });
}
