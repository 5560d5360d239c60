/**
 * The plain live console (no TUI): task state changes as they happen and, when enabled, task
 * output lines prefixed `[task] ` (read from the task logs by a tailer; capped at 2,000
 * characters a line, `\r`-aware). Task output goes to stdout, the final failure to stderr.
 *
 * A task's closing line (`✓ t completed (1.2s)`) is printed after its remaining output has
 * been read, so its output appears above it.
 */
import { uploadLine } from './upload-lines.js';
import { eventTime, type RunEvent, type RunEventSink } from '../events/events.js';
import { TaskOutputFollower } from './task-output.js';
import { shortDuration } from './format.js';
import { failureLines } from './failure-lines.js';
import { consoleLost } from '../util/console-loss.js';

/** the first line of a reason (a launch failure's hint follows on the next) */
const firstLine = (s: string): string => s.split('\n')[0];

export interface ConsoleOptions {
  /** echo task output lines (default true) */
  taskOutput?: boolean;
  /** print the final verdict lines (default true) */
  verdict?: boolean;
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** per-task log paths (from run_plan otherwise) */
  logPaths?: Map<string, string>;
  maxLineChars?: number;
  /** warning texts the caller already showed (load warnings): recorded elsewhere, not repeated here */
  shownWarnings?: Iterable<string>;
}

export class ConsoleReporter implements RunEventSink {
  readonly name = 'console';
  private readonly out: (s: string) => void;
  private readonly err: (s: string) => void;
  private readonly output: TaskOutputFollower | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly started = new Map<string, number>();
  private readonly attemptsTotal = new Map<string, number>();
  private readonly firstAttempt = new Map<string, number>();
  private logPaths: Map<string, string>;
  private runDir = '';
  private readonly shown: Set<string>;
  private final: Promise<void> | undefined;
  private readonly batch: OutputBatcher;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: ConsoleOptions = {}) {
    // a console that went away (a closed pipe, a hung-up terminal) is written to no more
    const rawOut =
      opts.out ??
      ((s: string) => {
        if (consoleLost() === undefined) process.stdout.write(s);
      });
    const rawErr =
      opts.err ??
      ((s: string) => {
        if (consoleLost() === undefined) process.stderr.write(s);
      });
    // A terminal's (or pipe's) writes block until it has read them. Writing may take a quarter of
    // the wall time, with a 50 ms allowance for bursts and scheduling hiccups; beyond that the echo
    // of task lines pauses until the share is back (skipped lines are counted).
    let pauseUntil = 0;
    let credit = CONSOLE_WRITE_BURST_MS;
    let lastWrite = performance.now();
    const timedOut = opts.out
      ? rawOut
      : (s: string) => {
          const t0 = performance.now();
          rawOut(s);
          const t1 = performance.now();
          credit = Math.min(CONSOLE_WRITE_BURST_MS, credit + (t1 - lastWrite) * CONSOLE_WRITE_SHARE);
          credit -= t1 - t0;
          lastWrite = t1;
          if (credit < 0) pauseUntil = t1 - credit / CONSOLE_WRITE_SHARE;
        };
    // task output can be millions of lines: batch stdout writes, keep stderr in order with them
    this.batch = new OutputBatcher(timedOut);
    this.out = (s) => this.batch.write(s);
    this.err = (s) => {
      this.batch.flush();
      rawErr(s);
    };
    this.logPaths = opts.logPaths ?? new Map<string, string>();
    this.shown = new Set(opts.shownWarnings ?? []);
    if (opts.taskOutput !== false) {
      // the console is a convenience copy: when its reader falls behind (a slow pipe or socket),
      // task lines are skipped instead of buffered without bound; the task logs keep every byte
      const backlog = opts.out ? () => 0 : () => process.stdout.writableLength + this.batch.pending;
      const behind = () =>
        backlog() > CONSOLE_BACKLOG_LIMIT ||
        (pauseUntil > 0 && performance.now() < pauseUntil) ||
        (!opts.out && consoleLost() !== undefined);
      this.output = new TaskOutputFollower(
        (l) => {
          if (behind()) {
            this.skipped++;
            return;
          }
          this.reportSkipped();
          this.out(`[${l.task}] ${l.line}\n`);
        },
        opts.maxLineChars ?? 2000,
        // whole chunks are only counted while the console is behind (no line splitting)
        { skipLines: behind, onSkipped: (n) => (this.skipped += n) },
      );
    }
  }

  private skipped = 0;

  /** the count of task lines the console skipped since the last one it showed */
  private reportSkipped(): void {
    if (this.skipped === 0) return;
    this.out(
      `… ${this.skipped} line(s) of task output not shown (console too slow); the task logs have everything\n`,
    );
    this.skipped = 0;
  }

  private follow(task: string): void {
    const path = this.logPaths.get(task);
    if (path) this.output?.follow(task, path);
  }

  /**
   * Prints `text` once the task's output so far has been shown. Status lines keep the order
   * of their events: each waits for the one before it.
   */
  private after(task: string, text: string, toErr = false): void {
    const print = () => (toErr ? this.err(text) : this.out(text));
    const closing = task ? this.output?.finish(task) : undefined;
    if (!closing && this.pending.size === 0) return print();
    const p = Promise.all([this.chain, closing]).then(print, print);
    this.chain = p;
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Prints now, or after pending status lines when there are any. */
  private say(text: string, toErr = false): void {
    this.after('', text, toErr);
  }

  /** services still waiting for readiness: start time, next progress line, last check */
  private readonly waiting = new Map<string, { since: number; nextAt: number; last?: string }>();
  private services = new Set<string>();
  private ticker: NodeJS.Timeout | undefined;

  /** Every long wait shows progress: a service not READY after 10 s gets a line, then every 30 s. */
  private tick(now = Date.now()): void {
    for (const [task, w] of this.waiting) {
      if (now < w.nextAt) continue;
      w.nextAt += 30_000;
      this.say(
        `⏳ ${task} waiting for readiness (${shortDuration(now - w.since)})${w.last ? ` — last check: ${w.last}` : ''}\n`,
      );
    }
  }

  private trackReadiness(e: RunEvent): void {
    if (e.type === 'run_plan') this.services = new Set(e.tasks.filter((t) => t.service).map((t) => t.name));
    else if (e.type === 'task_started' && this.services.has(e.task)) {
      this.waiting.set(e.task, { since: e.t, nextAt: e.t + 10_000 });
      this.ticker ??= setInterval(() => this.tick(), 1000).unref();
    } else if (e.type === 'probe_result' && e.role === 'readiness') {
      const w = this.waiting.get(e.task);
      if (w) w.last = e.detail.length > 200 ? `${e.detail.slice(0, 200)}…` : e.detail;
    } else if (e.type === 'task_ready' || e.type === 'task_finished' || e.type === 'task_retry') {
      this.waiting.delete(e.task);
    } else if (e.type === 'run_finished' && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  emit(e: RunEvent): void {
    this.trackReadiness(e);
    switch (e.type) {
      case 'run_started':
        this.runDir = e.runDir;
        if (e.resume) {
          const names = e.resume.rerun.slice(0, 12).join(', ') + (e.resume.rerun.length > 12 ? ', …' : '');
          this.out(
            `↺ Resuming workflow '${e.workflow}' (session ${e.session ?? 2}): ${e.resume.reused} completed task(s) reused, ${e.resume.rerun.length} to run: ${names}\n  Output folder: ${e.runDir}\n`,
          );
        } else
          this.out(`▶ Workflow '${e.workflow}' (${e.tasks.length} task(s))\n  Output folder: ${e.runDir}\n`);
        break;
      case 'run_plan':
        for (const t of e.tasks) {
          if (!this.logPaths.has(t.name)) this.logPaths.set(t.name, t.logPath);
          this.attemptsTotal.set(t.name, 1 + (t.retries?.count ?? 0));
        }
        break;
      case 'task_started': {
        this.started.set(e.task, eventTime(e));
        this.follow(e.task);
        // a resumed run's attempt numbers continue after the earlier sessions' attempts
        if (!this.firstAttempt.has(e.task)) this.firstAttempt.set(e.task, e.attempt);
        const total = (this.attemptsTotal.get(e.task) ?? 1) + (this.firstAttempt.get(e.task) ?? 1) - 1;
        this.say(`▶ ${e.task} started${e.attempt > 1 ? ` (attempt ${e.attempt}/${total})` : ''}\n`);
        break;
      }
      case 'task_ready':
        this.say(`● ${e.task} ready (${shortDuration(e.t - (this.started.get(e.task) ?? e.t))})\n`);
        break;
      case 'task_retry':
        this.say(
          `↻ ${e.task} ${e.reason ? firstLine(e.reason) : `exited with code ${e.exitCode ?? 'n/a'}`}; retrying in ${e.delayS}s (attempt ${e.nextAttempt}/${e.total})\n`,
        );
        break;
      case 'task_finished': {
        const took = this.started.has(e.task)
          ? ` (${shortDuration(eventTime(e) - (this.started.get(e.task) as number))})`
          : '';
        if (e.status === 'COMPLETED') this.after(e.task, `✓ ${e.task} completed${took}\n`);
        else if (e.status === 'FAILED') {
          const text = failureLines({
            ...e,
            started: this.started.has(e.task),
            logPath: this.logPaths.get(e.task),
            echoed: this.opts.taskOutput !== false,
          });
          this.after(e.task, text);
        } else this.after(e.task, `⊘ ${e.task} cancelled\n`);
        break;
      }
      case 'fail_fast':
        this.say(`✗ ${e.message}\n`);
        break;
      case 'signal':
        this.err(
          e.count === 1
            ? `⚠ Received ${e.signal}; cancelling the workflow (press Ctrl-C again to kill at once)\n`
            : `⚠ Received ${e.signal} again; killing every task now\n`,
        );
        break;
      case 'log':
        if ((e.level === 'warning' || e.level === 'error') && !this.shown.has(e.message))
          this.err(`⚠ ${e.message}\n`);
        else if (e.level === 'info' && !this.shown.has(e.message)) this.err(`ℹ ${e.message}\n`);
        break;
      case 'sink_failed':
        this.err(`⚠ writing ${e.path ?? e.sink} failed: ${e.message} (the run goes on without it)\n`);
        break;
      case 'backend_allocation':
        if (e.phase === 'waiting') this.err(`⏳ ${e.backend}: ${e.message}\n`);
        break;
      case 'probe_result':
        if (e.limit) this.err(`⚠ ${e.task}: ${e.role} probe ${e.target ?? e.kind} stopped: ${e.limit}\n`);
        break;
      case 'result_parsed':
        if (!e.ok) this.err(`⚠ ${e.task}: result incomplete: ${e.errors.join('; ')}\n`);
        break;
      case 'upload': {
        const l = uploadLine(e);
        if (l.level !== 'debug') this.say(`${l.text}\n`, l.level !== 'info');
        break;
      }
      case 'run_finished':
        this.finish(e);
        break;
      default:
        break;
    }
  }

  private finish(e: Extract<RunEvent, { type: 'run_finished' }>): void {
    if (this.opts.verdict === false) return;
    const print = () => {
      if (e.status === 'COMPLETED' && e.exitCode === 0)
        this.out(`✓ Workflow completed\n  Output folder: ${this.runDir}\n`);
      else if (e.status === 'COMPLETED') this.err(`✗ ${e.message}\n  Output folder: ${this.runDir}\n`);
      else if ([129, 130, 131, 143].includes(e.exitCode))
        this.err(`⚠ Workflow cancelled\n  ${e.message}\n  Output folder: ${this.runDir}\n`);
      else
        this.err(
          `✗ ${e.message.startsWith('Workflow ') ? e.message : `Workflow failed: ${e.message}`}\n  Output folder: ${this.runDir}\n`,
        );
    };
    this.final = this.drain().then(print);
  }

  private async drain(): Promise<void> {
    await this.output?.closeAll();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Reads the rest of every followed log, prints what is pending (verdict last). */
  async close(): Promise<void> {
    await this.drain();
    this.reportSkipped();
    await this.final;
    this.batch.flush();
  }
}

/** share of the wall time the console may spend blocked in writes, and the allowance for bursts */
const CONSOLE_WRITE_SHARE = 0.25;
const CONSOLE_WRITE_BURST_MS = 50;

/** bytes of console output allowed to wait for a slow reader before task lines are skipped */
export const CONSOLE_BACKLOG_LIMIT = 4 * 1024 * 1024;

/** Collects small writes and hands them on in one piece: at 64 KiB, or on the next turn. */
export class OutputBatcher {
  private buf: string[] = [];
  private size = 0;

  get pending(): number {
    return this.size;
  }
  private scheduled = false;
  constructor(
    private readonly sink: (s: string) => void,
    private readonly limit = 64 * 1024,
  ) {}

  write(s: string): void {
    this.buf.push(s);
    this.size += s.length;
    if (this.size >= this.limit) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.size === 0) return;
    const text = this.buf.join('');
    this.buf = [];
    this.size = 0;
    this.sink(text);
  }
}
