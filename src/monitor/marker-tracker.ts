/**
 * Follows the logs of tasks whose monitor has a `window:` during the run and keeps the lines that
 * match one of its markers, stamped with the time they were first read (every 200 ms). A new
 * attempt starts over (only the final attempt counts). Memory: matching lines only, capped.
 */
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { WindowSpec } from '../plan/monitor-config.js';
import { matcher, type StampedLine } from './window.js';

const POLL_MS = 200;
const CHUNK = 4 << 20;
const MAX_KEPT = 20_000;

interface Followed {
  path: string;
  test: (line: string) => boolean;
  offset: number;
  carry: string;
  decoder: StringDecoder;
  lineNo: number;
  lines: StampedLine[];
  active: boolean;
  /** clamp for lines read after the task ended */
  endedAt?: number;
}

export class MarkerTracker {
  private readonly tasks = new Map<string, Followed>();
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> = Promise.resolve();

  constructor(windows: Array<{ task: string; logPath: string; window: WindowSpec }>) {
    for (const w of windows) {
      const pats = [...(w.window.start?.patterns ?? []), ...(w.window.end?.patterns ?? [])];
      this.tasks.set(w.task, {
        path: w.logPath,
        test: matcher(pats),
        offset: 0,
        carry: '',
        decoder: new StringDecoder('utf8'),
        lineNo: 0,
        lines: [],
        active: false,
      });
    }
  }

  get size(): number {
    return this.tasks.size;
  }

  /** A new attempt of `task` starts now: its earlier lines no longer count. */
  async attemptStarted(task: string, attempt = 1): Promise<void> {
    const f = this.tasks.get(task);
    if (!f) return;
    await this.busy;
    // the first attempt's log starts empty (the run dir is prepared before any task starts)
    f.offset = attempt <= 1 ? 0 : await fileSize(f.path);
    f.carry = '';
    f.decoder = new StringDecoder('utf8');
    f.lineNo = 0;
    f.lines = [];
    f.active = true;
    f.endedAt = undefined;
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref?.();
  }

  async attemptEnded(task: string, t: number): Promise<void> {
    const f = this.tasks.get(task);
    if (!f) return;
    await this.poll();
    f.endedAt = t;
    await this.readAll(f, true);
    f.active = false;
  }

  poll(): Promise<void> {
    this.busy = this.busy.then(async () => {
      for (const f of this.tasks.values()) if (f.active) await this.readAll(f, false);
    });
    return this.busy;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.busy;
    for (const f of this.tasks.values()) if (f.active) await this.readAll(f, true);
  }

  lines(task: string): StampedLine[] {
    return this.tasks.get(task)?.lines ?? [];
  }

  searched(task: string): number {
    return this.tasks.get(task)?.lineNo ?? 0;
  }

  private async readAll(f: Followed, final: boolean): Promise<void> {
    let fh;
    try {
      fh = await open(f.path, 'r');
    } catch {
      return;
    }
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, CHUNK, f.offset);
        if (bytesRead <= 0) break;
        f.offset += bytesRead;
        this.consume(f, f.decoder.write(buf.subarray(0, bytesRead)));
        if (bytesRead < CHUNK) break;
      }
    } finally {
      await fh.close();
    }
    if (final && f.carry) {
      this.line(f, f.carry);
      f.carry = '';
    }
  }

  private consume(f: Followed, text: string): void {
    const parts = (f.carry + text).split(/\r\n|\r|\n/);
    f.carry = parts.pop() ?? '';
    if (f.carry.length > 1 << 20) f.carry = f.carry.slice(0, 1 << 20);
    for (const l of parts) this.line(f, l);
  }

  private line(f: Followed, text: string): void {
    f.lineNo++;
    if (f.lines.length >= MAX_KEPT || !f.test(text)) return;
    const now = Date.now();
    f.lines.push({
      t: f.endedAt !== undefined ? Math.min(now, f.endedAt) : now,
      lineNo: f.lineNo,
      text: text.slice(0, 500),
    });
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    const fh = await open(path, 'r');
    try {
      return (await fh.stat()).size;
    } finally {
      await fh.close();
    }
  } catch {
    return 0;
  }
}
