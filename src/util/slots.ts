/**
 * A fixed number of places for some work, taken in arrival order: `acquire` resolves with the
 * release once a place is free. Used where thousands of callers arrive at once and each would
 * otherwise build its whole request up front (a local launch builds the task's environment,
 * ~5 KB): those past the limit wait as one small record each. A waiter whose signal aborts leaves
 * the line (rejects with the signal's reason) and takes no place.
 */
import { onAbort } from './abort-fanout.js';

function abortReason(signal: AbortSignal | undefined): Error {
  const r: unknown = signal?.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}

interface Waiter {
  grant: () => void;
  /** aborted while waiting: skipped when its turn comes */
  gone: boolean;
}

export class Slots {
  private free: number;
  private line: Array<Waiter | undefined> = [];
  private head = 0;

  constructor(readonly size: number) {
    this.free = Math.max(1, Math.floor(size));
  }

  /** callers waiting for a place */
  get waiting(): number {
    let n = 0;
    for (let i = this.head; i < this.line.length; i++) if (this.line[i] && !this.line[i]?.gone) n++;
    return n;
  }

  /** places taken now */
  get taken(): number {
    return Math.max(1, Math.floor(this.size)) - this.free;
  }

  /** Resolves with the release (idempotent) once a place is free; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      let drop = (): void => undefined;
      const w: Waiter = {
        gone: false,
        grant: () => {
          drop();
          resolve(this.releaser());
        },
      };
      drop = onAbort(signal, () => {
        w.gone = true;
        reject(abortReason(signal));
      });
      this.line.push(w);
      this.next();
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.free++;
      this.next();
    };
  }

  /** hands free places to the first waiters still in line */
  private next(): void {
    while (this.free > 0 && this.head < this.line.length) {
      const w = this.line[this.head];
      this.line[this.head++] = undefined;
      if (this.head > 1024 && this.head * 2 > this.line.length) {
        this.line = this.line.slice(this.head);
        this.head = 0;
      }
      if (!w || w.gone) continue;
      this.free--;
      w.grant();
    }
    if (this.head === this.line.length) {
      this.line = [];
      this.head = 0;
    }
  }
}
