/**
 * The driver's side of the task launcher: one small long-lived process per driver, started on the
 * first launch (or earlier with `warmLauncher`), fed launch requests over a pipe. It starts each
 * attempt in its own session/process group with its output appended to the log, reports its pid
 * and, later, its exact exit status; and it is every attempt's lifeline: the pipe's other end is
 * held by this driver only, so when the driver dies — SIGKILL included — the launcher stops every
 * group it started (TERM, grace, KILL) and exits.
 *
 * `SFLOW_LAUNCHER=perl|node|inline` picks one (default: perl, else node). `inline` spawns from the
 * driver itself (Node's own synchronous fork; no lifeline) and is there for measurements and as the
 * last resort when no launcher starts.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { encodeLaunch, errnoInfo, parseReply, type LaunchFields } from './protocol.js';
import { NODE_LAUNCHER } from './node-launcher.js';
import { PERL_LAUNCHER } from './perl-launcher.js';

export type LauncherKind = 'perl' | 'node' | 'inline';

export interface LeaderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the exit status could not be learned (the launcher itself died) */
  error?: string;
}

export interface Started {
  pid: number;
  /** /proc start time of the leader (PID-reuse guard), null off Linux */
  startTime: number | null;
  exited: Promise<LeaderExit>;
}

/** The launcher could not start the program; `code` is the errno name (ENOENT, EACCES, …). */
export class LaunchFailure extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'LaunchFailure';
  }
}

const READY_TIMEOUT_MS = 10_000;

/**
 * Launch requests written to the launcher and not yet answered (started or failed). The launcher
 * starts one attempt at a time, so a deeper pipe only holds frames: 10,000 tasks submitted at once
 * were 10,000 encoded frames (each carries the task's whole environment, ~5–8 KB) waiting in the
 * driver's memory. The rest wait as requests and are encoded when their turn comes.
 */
export const LAUNCH_WINDOW = 32;

interface Queued {
  fields: Omit<LaunchFields, 'id'>;
  ok: (s: Started) => void;
  fail: (e: Error) => void;
}

interface Running {
  resolve: (e: LeaderExit) => void;
}

type Proc = ChildProcessByStdio<Writable, Readable, Readable>;

export class LauncherProcess {
  private seq = 0;
  private readonly waiting = new Map<number, { ok: (s: Started) => void; fail: (e: Error) => void }>();
  private readonly running = new Map<number, Running>();
  /** requests not yet written (LAUNCH_WINDOW are unanswered), first in first out */
  private queue: Array<Queued | undefined> = [];
  private queueHead = 0;
  private rest = '';
  /** frames of this event-loop turn, written together at its end (one wake-up of the launcher) */
  private outgoing: Buffer[] = [];
  private dead: string | undefined;
  private stderr = '';

  private constructor(
    readonly kind: Exclude<LauncherKind, 'inline'>,
    private readonly proc: Proc,
  ) {}

  get pid(): number {
    return this.proc.pid ?? 0;
  }

  /** Starts a launcher and waits for its ready line (bounded); rejects when it does not come. */
  static start(kind: Exclude<LauncherKind, 'inline'>): Promise<LauncherProcess> {
    const [cmd, args] =
      kind === 'perl' ? ['perl', ['-e', PERL_LAUNCHER]] : [process.execPath, ['-e', NODE_LAUNCHER]];
    return new Promise((resolve, reject) => {
      let proc: Proc;
      try {
        // its own session: a terminal's SIGHUP/SIGINT to the driver's group does not reach it
        proc = spawn(cmd, args, { cwd: '/', detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      const lp = new LauncherProcess(kind, proc);
      const timer = setTimeout(
        () => fail(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)),
        READY_TIMEOUT_MS,
      );
      const fail = (e: Error) => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(new Error(`${kind} launcher: ${e.message}${lp.stderr ? `: ${lp.stderr.trim()}` : ''}`));
      };
      const early = (code: number | null, signal: NodeJS.Signals | null) =>
        fail(new Error(`exited before it was ready (${signal ?? `code ${code}`})`));
      proc.once('error', fail);
      proc.once('exit', early);
      proc.stdin.on('error', () => undefined); // EPIPE once it died: reported by 'exit'
      proc.stderr.setEncoding('utf8');
      proc.stderr.on('data', (d: string) => (lp.stderr = (lp.stderr + d).slice(-2000)));
      proc.stdout.setEncoding('latin1');
      proc.stdout.on('data', (d: string) =>
        lp.onData(d, () => {
          clearTimeout(timer);
          proc.removeListener('error', fail);
          proc.removeListener('exit', early);
          proc.on('error', () => undefined);
          proc.on('exit', (code, signal) => lp.lost(`exited (${signal ?? `code ${code}`})`));
          lp.idle();
          resolve(lp);
        }),
      );
    });
  }

  /** Hands one attempt to the launcher; resolves once it runs (exec'd), rejects if it could not start. */
  launch(f: Omit<LaunchFields, 'id'>): Promise<Started> {
    if (this.dead) return Promise.reject(new Error(`the sflow launcher ${this.dead}`));
    return new Promise<Started>((ok, fail) => {
      this.queue.push({ fields: f, ok, fail });
      this.busy();
      this.pump();
    });
  }

  /** requests waiting for a place in the window (for tests and the measurements) */
  get queued(): number {
    return this.queue.length - this.queueHead;
  }

  /** frames written whose answer has not come yet */
  get unanswered(): number {
    return this.waiting.size;
  }

  /**
   * Frames queued requests while fewer than LAUNCH_WINDOW are unanswered; they leave together at
   * the end of this event-loop turn (`send`), so the launches of one turn cost one write.
   */
  private pump(): void {
    while (!this.dead && this.waiting.size < LAUNCH_WINDOW && this.queueHead < this.queue.length) {
      const q = this.queue[this.queueHead];
      this.queue[this.queueHead++] = undefined; // answered requests are not kept
      if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.queueHead);
        this.queueHead = 0;
      }
      if (!q) continue;
      const id = ++this.seq;
      let frame: Buffer;
      try {
        frame = encodeLaunch({ ...q.fields, id });
      } catch (e) {
        q.fail(e instanceof Error ? e : new Error(String(e)));
        continue;
      }
      this.waiting.set(id, { ok: q.ok, fail: q.fail });
      if (!this.outgoing.length) setImmediate(() => this.send());
      this.outgoing.push(frame);
    }
    this.idle();
  }

  /** Writes the frames of this turn in one write (a dead launcher's were failed by `lost`). */
  private send(): void {
    const frames = this.outgoing;
    this.outgoing = [];
    if (!this.dead) this.proc.stdin.write(Buffer.concat(frames));
  }

  private onData(chunk: string, ready: () => void): void {
    this.rest += chunk;
    let nl: number;
    while ((nl = this.rest.indexOf('\n')) >= 0) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      const r = parseReply(line);
      if (!r) continue;
      if (r.kind === 'ready') ready();
      else if (r.kind === 'started') {
        const w = this.waiting.get(r.id);
        if (!w) continue;
        this.waiting.delete(r.id);
        const exited = new Promise<LeaderExit>((resolve) => this.running.set(r.pid, { resolve }));
        w.ok({ pid: r.pid, startTime: r.startTime, exited });
        this.pump();
      } else if (r.kind === 'failed') {
        const w = this.waiting.get(r.id);
        if (!w) continue;
        this.waiting.delete(r.id);
        const e = errnoInfo(r.errno);
        w.fail(new LaunchFailure(e.message, e.code));
        this.pump();
      } else {
        const run = this.running.get(r.pid);
        if (!run) continue;
        this.running.delete(r.pid);
        run.resolve({ code: r.code, signal: r.signal });
        this.idle();
      }
    }
  }

  /** The launcher died under a live driver: nothing it started has a lifeline or a known exit status. */
  private lost(why: string): void {
    if (this.dead) return;
    this.dead = why;
    if (current && currentProc === this) current = undefined;
    for (const w of this.waiting.values()) w.fail(new Error(`the sflow launcher ${why}`));
    this.waiting.clear();
    for (let i = this.queueHead; i < this.queue.length; i++)
      this.queue[i]?.fail(new Error(`the sflow launcher ${why}`));
    this.queue = [];
    this.queueHead = 0;
    for (const [pid, run] of this.running) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      run.resolve({
        code: null,
        signal: null,
        error: `the sflow launcher (pid ${this.pid}) ${why}: the task lost its lifeline and was stopped`,
      });
    }
    this.running.clear();
  }

  /** keep the driver's event loop alive while an answer is due */
  private busy(): void {
    this.proc.ref();
    (this.proc.stdout as Socket).ref();
  }

  private idle(): void {
    if (this.waiting.size || this.running.size || this.queued) return;
    this.proc.unref();
    (this.proc.stdout as Socket).unref();
    (this.proc.stderr as Socket).unref();
  }

  /** Test hook: the launcher's own process (to kill it and see the driver cope). */
  get process(): Proc {
    return this.proc;
  }
}

let current: Promise<LauncherProcess | null> | undefined;
let currentProc: LauncherProcess | undefined;
let lastError: string | undefined;

export function launcherKind(env: NodeJS.ProcessEnv = process.env): LauncherKind | 'auto' {
  const v = (env.SFLOW_LAUNCHER ?? '').toLowerCase();
  return v === 'perl' || v === 'node' || v === 'inline' ? v : 'auto';
}

async function startAny(): Promise<LauncherProcess | null> {
  const want = launcherKind();
  if (want === 'inline') return null;
  const order: Array<'perl' | 'node'> = want === 'auto' ? ['perl', 'node'] : [want];
  const errors: string[] = [];
  for (const kind of order) {
    try {
      const lp = await LauncherProcess.start(kind);
      currentProc = lp;
      return lp;
    } catch (e) {
      errors.push(e instanceof Error ? e.message : String(e));
    }
  }
  lastError = errors.join('; ');
  return null;
}

/** The launcher of this driver (started on first use); null: spawn inline (no launcher starts). */
export function getLauncher(): Promise<LauncherProcess | null> {
  current ??= startAny();
  return current;
}

/** Start the launcher now (a backend's allocate), so the first task does not wait for it. */
export function warmLauncher(): void {
  void getLauncher();
}

/** pid of this driver's launcher once it runs (it holds the lifeline of every task), else undefined */
export function launcherPid(): number | undefined {
  return currentProc?.pid || undefined;
}

/** Why no launcher runs (after getLauncher resolved null), for a warning. */
export function launcherError(): string | undefined {
  return lastError;
}
