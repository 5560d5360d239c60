/**
 * Follows a growing task log. The task writes the file itself (see util/process-group.ts);
 * the tailer reads only the new bytes, in bounded chunks, and hands them to
 *  - the console line splitter (capped, `\r`-aware, escape-free lines for the console/TUI),
 *  - raw-chunk subscribers.
 * New data is noticed through fs.watch when the platform offers it, and in any case by a
 * fallback poll timer, so memory stays flat whatever the task writes (1 GB, a 50 MB line).
 * With no consumer at all nothing is read.
 */

import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ConsoleLineSplitter, type ConsoleLine, type ConsoleLineOptions } from './console-lines.js';
import { errorCode, errorMessage } from '../util/errors.js';

export const DEFAULT_TAIL_POLL_MS = 75;
/** bytes handed to the splitter and subscribers at a time */
export const DEFAULT_TAIL_CHUNK_BYTES = 64 * 1024;
/** one read() fetches up to this many chunks (fewer thread-pool round trips) */
const CHUNKS_PER_READ = 16;
const MIN_GAP_MS = 10;

/** Receives each chunk read (and the file offset it starts at); it may keep the buffer. */
export type ChunkListener = (chunk: Buffer, offset: number) => void;

export interface LogTailerOptions {
  path: string;
  /** task name, copied into every console line */
  task: string;
  /** console lines; omit when nobody shows task output (no TTY) */
  onLine?: (line: ConsoleLine) => void;
  console?: ConsoleLineOptions;
  /** byte offset to start from (e.g. the log size when a retry attempt started) */
  startOffset?: number;
  pollMs?: number;
  chunkBytes?: number;
  /** use fs.watch as a hint (default true); the poll timer runs regardless */
  watch?: boolean;
  /**
   * Asked before each chunk: true while the console cannot keep up. The chunk's lines are then
   * counted (onSkipped) instead of split, and the line in progress is dropped, not shown torn.
   */
  skipLines?: () => boolean;
  onSkipped?: (lines: number) => void;
  /** read errors other than "file does not exist yet"; default: ignored */
  onError?: (err: Error) => void;
}

export class LogTailer {
  private splitter: ConsoleLineSplitter | undefined;
  private skipping = false;
  private emittedBefore = 0;
  private readonly listeners = new Set<ChunkListener>();
  private readonly chunkBytes: number;
  private readonly readBytes: number;
  private readonly scratch: Buffer;
  private pos: number;
  private fh: FileHandle | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  private soon: NodeJS.Timeout | undefined;
  private lastPumpEnd = 0;
  private closing: Promise<void> | undefined;

  constructor(private readonly opts: LogTailerOptions) {
    this.pos = opts.startOffset ?? 0;
    this.chunkBytes = Math.max(1024, opts.chunkBytes ?? DEFAULT_TAIL_CHUNK_BYTES);
    this.readBytes = this.chunkBytes * CHUNKS_PER_READ;
    this.scratch = Buffer.allocUnsafe(this.readBytes);
    this.splitter = opts.onLine ? new ConsoleLineSplitter(opts.task, opts.onLine, opts.console) : undefined;
  }

  /** Starts following. Returns this. */
  start(): this {
    if (this.timer || this.closing) return this;
    this.timer = setInterval(() => this.poke(), this.opts.pollMs ?? DEFAULT_TAIL_POLL_MS);
    this.timer.unref();
    this.poke();
    return this;
  }

  /** bytes consumed so far, as a file offset */
  get offset(): number {
    return this.pos;
  }

  /** console lines emitted so far */
  get lines(): number {
    return this.emittedBefore + (this.splitter?.emitted ?? 0);
  }

  /** Raw chunks from the current offset on. Returns an unsubscribe function. */
  subscribe(fn: ChunkListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Read soon (e.g. on a watch event, or when the task exits) instead of waiting for the
   * next timer tick. Pokes are coalesced: while output streams in, reads start at most
   * every MIN_GAP_MS, so a burst of tiny writes does not become a burst of tiny reads.
   */
  poke(): void {
    if (this.closing || this.soon) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    const wait = this.lastPumpEnd + MIN_GAP_MS - Date.now();
    if (wait <= 0) {
      void this.pump();
      return;
    }
    this.soon = setTimeout(() => {
      this.soon = undefined;
      if (!this.closing) void this.pump();
    }, wait);
  }

  /** Reads everything up to the end of the file, flushes the last partial line, stops. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      if (this.soon) clearTimeout(this.soon);
      this.watcher?.close();
      await this.pumping;
      await this.guard(() => this.readToEnd());
      if (!this.skipping) this.splitter?.flush();
      await this.fh?.close().catch(() => undefined);
      this.fh = undefined;
    })();
    return this.closing;
  }

  private pump(): Promise<void> {
    this.again = false;
    this.pumping = this.guard(() => this.readToEnd()).finally(() => {
      this.pumping = undefined;
      this.lastPumpEnd = Date.now();
      if (this.again) this.poke(); // data arrived meanwhile: go again after the gap
    });
    return this.pumping;
  }

  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.opts.onError?.(e instanceof Error ? e : new Error(errorMessage(e)));
    }
  }

  private async ensureOpen(): Promise<FileHandle | undefined> {
    if (this.fh) return this.fh;
    try {
      this.fh = await open(this.opts.path, 'r');
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return undefined; // not created yet
      throw e;
    }
    if (this.opts.watch !== false && !this.closing) {
      try {
        this.watcher = watch(this.opts.path, { persistent: false }, () => this.poke());
        this.watcher.on('error', () => this.watcher?.close());
      } catch {
        // no inotify left, or an unsupported file system: the poll timer suffices
      }
    }
    return this.fh;
  }

  private toConsole(chunk: Buffer): void {
    if (!this.splitter) return;
    if (this.opts.skipLines?.()) {
      let n = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
      this.opts.onSkipped?.(n);
      this.skipping = true;
      return;
    }
    if (this.skipping) {
      // resume on a fresh line: the rest of the skipped line is dropped too
      this.skipping = false;
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        this.skipping = true;
        return;
      }
      this.opts.onSkipped?.(1);
      this.emittedBefore += this.splitter.emitted;
      this.splitter = new ConsoleLineSplitter(
        this.opts.task,
        this.opts.onLine ?? (() => undefined),
        this.opts.console,
      );
      chunk = chunk.subarray(nl + 1);
    }
    this.splitter.pushBytes(chunk);
  }

  private async readToEnd(): Promise<void> {
    if (!this.splitter && this.listeners.size === 0) return;
    const fh = await this.ensureOpen();
    if (!fh) return;
    for (;;) {
      // listeners may keep their chunks, so they get fresh memory; the splitter does not
      const target = this.listeners.size > 0 ? Buffer.allocUnsafe(this.readBytes) : this.scratch;
      const { bytesRead } = await fh.read(target, 0, this.readBytes, this.pos);
      if (bytesRead === 0) break;
      for (let off = 0; off < bytesRead; off += this.chunkBytes) {
        const chunk = target.subarray(off, Math.min(bytesRead, off + this.chunkBytes));
        const at = this.pos;
        this.pos += chunk.length;
        this.toConsole(chunk);
        for (const l of this.listeners) l(chunk, at);
      }
      if (bytesRead < this.readBytes) break; // caught up for now
    }
    this.splitter?.endOfRead();
  }
}

/** Creates and starts a tailer. */
export function tailLog(opts: LogTailerOptions): LogTailer {
  return new LogTailer(opts).start();
}
