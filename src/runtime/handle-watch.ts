/**
 * Status of every live attempt, one batched call per backend per tick (never one per task): a
 * backend with `watch` pushes changes as they happen; the others are polled every
 * `capabilities.pollIntervalMs` with all of their live handles in one `poll`. A poll that fails or
 * times out is reported (once per streak) and retried on the next tick; a handle the engine stops
 * reporting for `lostAfter` consecutive answered polls is given up as lost.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { handleKey, type Backend, type HandleStatus, type TaskHandle } from '../backends/backend.js';
import { errorMessage } from '../util/errors.js';
import { deadline } from '../util/deadline.js';

export interface WatchOptions {
  /** bound of one poll call (default 30 s; the engine call is aborted after it) */
  pollTimeoutMs?: number;
  /** answered polls without a word about a handle before it counts as lost (default 5) */
  lostAfter?: number;
  onStatus(handle: TaskHandle, status: HandleStatus): void;
  /** a poll failed (timeout, engine error); `streak` counts consecutive failures */
  onPollError(backend: Backend, message: string, streak: number): void;
}

interface Entry {
  handle: TaskHandle;
  misses: number;
}

export class HandleWatch {
  private readonly byBackend = new Map<Backend, Map<string, Entry>>();
  private readonly loops = new Map<Backend, Promise<void>>();
  private readonly ac = new AbortController();
  /**
   * the last status pushed for each handle not added yet: an exit (a task that ends at once) or a
   * start (a multi-pod launch whose leader runs before its last pod is even created) would
   * otherwise be lost, and a watch pushes each change only once (bounded: attempts cancelled while
   * launching never are)
   */
  private readonly early = new Map<Backend, Map<string, HandleStatus>>();

  constructor(private readonly o: WatchOptions) {}

  /** Starts the backend's watch or poll loop (before its first launch, so no change is missed). */
  attach(backend: Backend): Map<string, Entry> {
    let m = this.byBackend.get(backend);
    if (!m) {
      m = new Map();
      this.byBackend.set(backend, m);
      if (backend.watch) backend.watch({ onStatus: (h, s) => this.deliver(backend, h, s) }, this.ac.signal);
      else this.loops.set(backend, this.pollLoop(backend, m));
    }
    return m;
  }

  /** Starts following a handle. */
  add(backend: Backend, handle: TaskHandle): void {
    const key = handleKey(handle);
    this.attach(backend).set(key, { handle, misses: 0 });
    // a status pushed before the launch returned (its start, or the exit of a task that ends at
    // once): delivered now, after the caller's own bookkeeping of the launch
    const early = this.early.get(backend)?.get(key);
    if (early) {
      this.early.get(backend)?.delete(key);
      queueMicrotask(() => this.deliver(backend, handle, early));
    }
  }

  /** Stops following a handle (its attempt ended or was given up). */
  remove(backend: Backend, handle: TaskHandle): void {
    this.byBackend.get(backend)?.delete(handleKey(handle));
  }

  /** Ends every loop and watch. */
  async close(): Promise<void> {
    this.ac.abort();
    await Promise.allSettled(this.loops.values());
  }

  private deliver(backend: Backend, h: TaskHandle, s: HandleStatus): void {
    const e = this.byBackend.get(backend)?.get(handleKey(h));
    if (!e) {
      this.keepEarly(backend, handleKey(h), s);
      return;
    }
    if (s.state === 'EXITED') this.remove(backend, h);
    this.o.onStatus(e.handle, s);
  }

  private keepEarly(backend: Backend, key: string, s: HandleStatus): void {
    let m = this.early.get(backend);
    if (!m) this.early.set(backend, (m = new Map<string, HandleStatus>()));
    if (m.get(key)?.state === 'EXITED') return; // an exit is final: a late start does not replace it
    m.set(key, s);
    if (m.size > 4096) m.delete(m.keys().next().value as string);
  }

  private async pollLoop(backend: Backend, live: Map<string, Entry>): Promise<void> {
    const every = Math.max(10, backend.capabilities().pollIntervalMs);
    const lostAfter = this.o.lostAfter ?? 5;
    let streak = 0;
    while (!this.ac.signal.aborted) {
      const entries = [...live.values()];
      if (entries.length > 0) {
        const boundMs = this.o.pollTimeoutMs ?? 30_000;
        // not AbortSignal.any([…, AbortSignal.timeout()]): on Node 20 that timeout can be collected
        // unfired, and a hung status call then hangs the run (util/deadline.ts)
        const bound = deadline(boundMs, [this.ac.signal], `status call timed out after ${boundMs} ms`);
        const signal = bound.signal;
        try {
          const got = await backend.poll(
            entries.map((e) => e.handle),
            signal,
          );
          streak = 0;
          for (const e of entries) {
            const s = got.get(handleKey(e.handle));
            if (!live.has(handleKey(e.handle))) continue;
            if (s) {
              e.misses = 0;
              this.deliver(backend, e.handle, s);
            } else if (++e.misses >= lostAfter) {
              this.deliver(backend, e.handle, {
                state: 'EXITED',
                error: `status lost: ${backend.name} reported nothing about it for ${e.misses} status calls`,
              });
            }
          }
        } catch (err) {
          if (this.ac.signal.aborted) return;
          const why = signal.aborted ? `status call timed out after ${boundMs} ms` : errorMessage(err);
          this.o.onPollError(backend, why, ++streak);
        } finally {
          bound.dispose();
        }
      }
      await sleep(every, undefined, { signal: this.ac.signal }).catch(() => undefined);
    }
  }
}
