/**
 * Event-loop stall watchdog: while a run is live, a 100 ms timer measures how late it fires. A
 * tick later than the threshold (default 1 s, SFLOW_LOOP_STALL_MS) means the driver's event loop
 * was blocked that long — probes, timers, the live view and signal handling all waited. Each stall
 * is appended to `<run dir>/loop_stalls.txt` with what was running (live tasks, the last events
 * before it) and announced through `warn`; the run's end adds a summary line when any occurred.
 *
 * A consumer of the run's event stream like the other sinks; it never emits events itself.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { RunEvent, RunEventSink } from '../events/events.js';

const TICK_MS = 100;
const RECENT = 5;

export interface Stall {
  /** when the blocked stretch began (ms since epoch) */
  at: number;
  durationMs: number;
  running: string[];
  recent: string[];
}

export interface LoopStallOptions {
  thresholdMs?: number;
  /** one line per stall and the end-of-run summary (console warning / TUI notice) */
  warn: (message: string) => void;
  now?: () => number;
}

export function stallThresholdMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.SFLOW_LOOP_STALL_MS);
  return Number.isFinite(v) && v >= 50 ? v : 1000;
}

function describe(e: RunEvent): string {
  switch (e.type) {
    case 'task_started':
    case 'task_submitted':
    case 'task_ready':
      return `${e.type} ${e.task}`;
    case 'task_finished':
      return `task_finished ${e.task} ${e.status}`;
    case 'probe_result':
      return `probe_result ${e.task} ${e.kind} ${e.ok ? 'ok' : 'not yet'}`;
    case 'external_call':
      return `external_call ${e.tool} (${Math.round(e.durationMs)} ms)`;
    default:
      return e.type;
  }
}

export class LoopStallWatchdog implements RunEventSink {
  readonly stalls: Stall[] = [];
  private readonly threshold: number;
  private readonly now: () => number;
  private file = '';
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private histogram: IntervalHistogram | undefined;
  private readonly running = new Set<string>();
  private readonly recent: string[] = [];

  constructor(private readonly opts: LoopStallOptions) {
    this.threshold = opts.thresholdMs ?? stallThresholdMs();
    this.now = opts.now ?? Date.now;
  }

  emit(e: RunEvent): void {
    if (e.type === 'run_started') this.start(join(e.runDir, 'loop_stalls.txt'));
    else if (e.type === 'task_started') this.running.add(e.task);
    else if (e.type === 'task_finished') this.running.delete(e.task);
    else if (e.type === 'run_finished') this.stop();
    this.recent.push(`${new Date(e.t).toISOString()} ${describe(e)}`);
    if (this.recent.length > RECENT) this.recent.shift();
  }

  private start(file: string): void {
    if (this.timer) return;
    this.file = file;
    this.last = this.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.histogram = monitorEventLoopDelay({ resolution: 20 });
    this.histogram.enable();
  }

  /** Also called by tests: checks how late this tick is. */
  tick(): void {
    const t = this.now();
    const late = t - this.last - TICK_MS;
    this.last = t;
    if (late < this.threshold) return;
    const stall: Stall = {
      at: t - late,
      durationMs: late,
      running: [...this.running].sort(),
      recent: [...this.recent],
    };
    this.stalls.push(stall);
    const tasks = stall.running.length ? stall.running.join(', ') : 'none';
    this.write(
      [
        `${new Date(stall.at).toISOString()} event loop blocked for ${Math.round(late)} ms (threshold ${this.threshold} ms)`,
        `  running tasks: ${tasks}`,
        '  last events before it:',
        ...stall.recent.map((r) => `    ${r}`),
        '',
      ].join('\n'),
    );
    this.opts.warn(
      `sflow's event loop was blocked for ${(late / 1000).toFixed(1)}s (running: ${tasks}); probes and the live view were delayed — see loop_stalls.txt`,
    );
  }

  private write(text: string): void {
    try {
      appendFileSync(this.file, text);
    } catch {
      /* the run dir vanished: the warning still reaches the user */
    }
  }

  private stop(): void {
    if (!this.timer) return;
    this.tick();
    clearInterval(this.timer);
    this.timer = undefined;
    this.histogram?.disable();
    if (this.stalls.length === 0) return;
    const longest = Math.max(...this.stalls.map((s) => s.durationMs));
    const h = this.histogram;
    const p99 = h ? Math.round(h.percentile(99) / 1e6) : undefined;
    const summary = `${this.stalls.length} event-loop stall(s) over ${this.threshold} ms, longest ${Math.round(longest)} ms${p99 !== undefined ? `; loop delay p99 ${p99} ms` : ''}`;
    this.write(`summary: ${summary}\n`);
    this.opts.warn(`${summary} (details in loop_stalls.txt)`);
  }

  async close(): Promise<void> {
    this.stop();
  }
}
