/**
 * Follows the logs of running tasks for the console, lazily: a task's log gets a tailer
 * (outputs/task-log.ts) only once it has bytes in it. One shared timer looks at the sizes of
 * the quiet logs, so a thousand short tasks that print nothing cost one `stat` each instead
 * of an open file, a watcher and a poll timer apiece.
 */
import { statSync } from 'node:fs';
import { tailLog, type LogTailer } from '../outputs/task-log.js';
import type { ConsoleLine } from '../outputs/console-lines.js';

const CHECK_MS = 100;

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export class TaskOutputFollower {
  private readonly quiet = new Map<string, string>();
  private readonly tailers = new Map<string, LogTailer>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onLine: (l: ConsoleLine) => void,
    private readonly maxChars = 2000,
    /** while true, lines are only counted (onSkipped), not split: the console is behind */
    private readonly skip?: { skipLines: () => boolean; onSkipped: (lines: number) => void },
  ) {}

  /** Start following `task` (idempotent; a retry keeps following the same log). */
  follow(task: string, path: string): void {
    if (this.tailers.has(task) || this.quiet.has(task)) return;
    this.quiet.set(task, path);
    if (!this.timer) {
      this.timer = setInterval(() => this.check(), CHECK_MS);
      this.timer.unref();
    }
  }

  private tail(task: string, path: string): LogTailer {
    const t = tailLog({
      path,
      task,
      console: { maxChars: this.maxChars },
      onLine: this.onLine,
      ...this.skip,
    });
    this.tailers.set(task, t);
    return t;
  }

  private check(): void {
    for (const [task, path] of this.quiet) {
      if (sizeOf(path) > 0) {
        this.quiet.delete(task);
        this.tail(task, path);
      }
    }
    if (this.quiet.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** The task ended: show the rest of its output. Resolves once it has been handed on. */
  finish(task: string): Promise<void> | undefined {
    let t = this.tailers.get(task);
    const path = this.quiet.get(task);
    this.quiet.delete(task);
    if (!t && path !== undefined && sizeOf(path) > 0) t = this.tail(task, path);
    if (!t) return undefined;
    this.tailers.delete(task);
    return t.close().catch(() => undefined);
  }

  /** Reads the rest of every followed log and stops. */
  async closeAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const tasks = [...this.quiet.keys(), ...this.tailers.keys()];
    await Promise.all(tasks.map((task) => this.finish(task) ?? Promise.resolve()));
  }
}
