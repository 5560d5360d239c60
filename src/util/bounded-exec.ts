/**
 * The one door for short external control calls (docker, srun, squeue, scancel, kubectl,
 * nvidia-smi, ...): no shell, a hard timeout (SIGTERM, then SIGKILL after a grace),
 * retries only when the caller says the call is safe to repeat, and a trace row for every
 * call, sent to whoever listens (the run's "External Command Health" section and
 * command_trace.jsonl are built from these rows). A call still running after `slowMs`
 * (default 5 s) raises a live warning at that moment.
 *
 * Not for task processes: those go through util/process-group.ts.
 */

import { redactArgs } from './redact.js';
import { sleep } from './sleep.js';

export const SLOW_CALL_MS = 5_000;

export interface BoundedExecOptions {
  /** hard limit of one attempt */
  timeoutMs: number;
  /** extra attempts after the first (default 0); set only when the call is safe to repeat */
  retries?: number;
  /** wait before the first retry (default 500 ms), doubled for each further one */
  retryDelayMs?: number;
  /** which outcomes to retry (default: any failure except "program not found") */
  retryOn?: (outcome: ExecOutcome) => boolean;
  /** written to stdin */
  input?: string;
  /** added to (and overriding) the driver's environment */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** after the timeout's SIGTERM, SIGKILL this much later (default 2,000 ms) */
  killGraceMs?: number;
  /** per-stream output limit (default 16 MiB) */
  maxBufferBytes?: number;
  /** cancels the call (and any pending retry) */
  signal?: AbortSignal;
  /** threshold for the live "slow call" warning and the `slow` flag (default 5,000 ms) */
  slowMs?: number;
  /** sees stderr as it arrives (a long call that reports progress, e.g. `salloc` while queued) */
  onStderr?: (text: string) => void;
  /**
   * a failure that is an expected answer (`No such container` from an inspect after removal, a
   * cancel of a job that already ended): not retried, and traced as ok (`expected: true`) so the
   * run's health counts only failures that changed or risked the run
   */
  expected?: (outcome: ExecOutcome) => boolean;
}

export interface ExecOutcome {
  /** null when the program could not start or was killed by a signal */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** wall time of all attempts together, retry waits included */
  durationMs: number;
  /** the last attempt hit timeoutMs */
  timedOut: boolean;
  attempts: number;
  /** exit code 0, in time */
  ok: boolean;
  /** errno-style code when the program could not run (ENOENT, EACCES, ...) */
  errorCode?: string;
  /** execa's one-line description of a failure */
  errorMessage?: string;
}

export interface ExternalCallTrace {
  /** program name as called (e.g. "docker") */
  tool: string;
  /** arguments with secret values (-e KEY=VALUE, --token X, ...) redacted */
  args: string[];
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  attempts: number;
  ok: boolean;
  slow: boolean;
  /** ISO time the call started */
  startedAt: string;
  errorCode?: string;
  /** last 500 characters of stderr, for failed calls */
  stderrTail?: string;
  /** it failed with an answer the caller expected (see BoundedExecOptions.expected): ok is true */
  expected?: true;
}

export interface SlowCallWarning {
  tool: string;
  args: string[];
  elapsedMs: number;
  attempt: number;
}

const traceListeners = new Set<(t: ExternalCallTrace) => void>();
const slowListeners = new Set<(w: SlowCallWarning) => void>();

/** Every finished external call. Returns an unsubscribe function. */
export function onExternalCall(listener: (t: ExternalCallTrace) => void): () => void {
  traceListeners.add(listener);
  return () => traceListeners.delete(listener);
}

/** A call passed the slow threshold and is still running. Returns an unsubscribe function. */
export function onSlowExternalCall(listener: (w: SlowCallWarning) => void): () => void {
  slowListeners.add(listener);
  return () => slowListeners.delete(listener);
}

/** Rows worth writing to command_trace.jsonl: slow or failed calls. */
export function isNotableCall(t: ExternalCallTrace): boolean {
  return t.slow || !t.ok;
}

function notify<T>(set: Set<(x: T) => void>, x: T): void {
  for (const l of set) {
    try {
      l(x);
    } catch {
      // a broken listener must not break the call
    }
  }
}

/**
 * For bounded calls that are not subprocesses (API requests through a client library,
 * util/bounded-call.ts): their trace rows and slow-call warnings reach the same listeners.
 */
export function reportExternalCall(trace: ExternalCallTrace): void {
  notify(traceListeners, trace);
}

export function reportSlowCall(warning: SlowCallWarning): void {
  notify(slowListeners, warning);
}

const defaultRetryOn = (o: ExecOutcome) => !o.ok && o.errorCode !== 'ENOENT' && o.errorCode !== 'EACCES';

async function attempt(file: string, args: string[], o: BoundedExecOptions) {
  // imported on the first call: execa and its dependencies (~220 KB) stay out of runs that make none
  const { execa } = await import('execa');
  const sub = execa(file, args, {
    timeout: Math.max(1, o.timeoutMs),
    killSignal: 'SIGTERM',
    forceKillAfterDelay: o.killGraceMs ?? 2_000,
    reject: false,
    shell: false,
    input: o.input,
    stdin: o.input === undefined ? 'ignore' : 'pipe',
    env: o.env,
    extendEnv: true,
    cwd: o.cwd,
    maxBuffer: o.maxBufferBytes ?? 16 * 1024 * 1024,
    cancelSignal: o.signal,
    stripFinalNewline: false,
    encoding: 'utf8',
  });
  if (o.onStderr) sub.stderr?.on('data', (d: Buffer | string) => o.onStderr?.(String(d)));
  const r = await sub;
  const err = r as unknown as { code?: unknown; shortMessage?: string };
  return {
    exitCode: typeof r.exitCode === 'number' ? r.exitCode : null,
    signal: r.signal ?? null,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    timedOut: r.timedOut,
    failed: r.failed,
    errorCode: typeof err.code === 'string' ? err.code : undefined,
    errorMessage: r.failed ? err.shortMessage : undefined,
  };
}

/** Runs `file args` (no shell) within the bounds given; never throws for a failed call. */
export async function boundedExec(
  file: string,
  args: string[],
  opts: BoundedExecOptions,
): Promise<ExecOutcome> {
  const t0 = Date.now();
  const retries = Math.max(0, opts.retries ?? 0);
  const retryOn = opts.retryOn ?? defaultRetryOn;
  const slowMs = opts.slowMs ?? SLOW_CALL_MS;
  const shownArgs = redactArgs(args);
  let delay = opts.retryDelayMs ?? 500;
  let outcome!: ExecOutcome;
  let expected!: boolean;
  let warned = false;
  let current = 1;
  const slowTimer = setTimeout(() => {
    warned = true;
    notify(slowListeners, { tool: file, args: shownArgs, elapsedMs: Date.now() - t0, attempt: current });
  }, slowMs);
  slowTimer.unref();
  try {
    for (let n = 1; ; n++) {
      current = n;
      const r = await attempt(file, args, opts);
      outcome = {
        exitCode: r.exitCode,
        signal: r.signal,
        stdout: r.stdout,
        stderr: r.stderr,
        durationMs: Date.now() - t0,
        timedOut: r.timedOut,
        attempts: n,
        ok: !r.failed && r.exitCode === 0 && !r.timedOut,
        ...(r.errorCode ? { errorCode: r.errorCode } : {}),
        ...(r.errorMessage ? { errorMessage: r.errorMessage } : {}),
      };
      expected = !outcome.ok && opts.expected?.(outcome) === true;
      if (outcome.ok || expected || n > retries || opts.signal?.aborted || !retryOn(outcome)) break;
      await sleep(delay, opts.signal);
      if (opts.signal?.aborted) break;
      delay *= 2;
    }
  } finally {
    clearTimeout(slowTimer);
  }
  outcome.durationMs = Date.now() - t0;
  const trace: ExternalCallTrace = {
    tool: file,
    args: shownArgs,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    durationMs: outcome.durationMs,
    timedOut: outcome.timedOut,
    attempts: outcome.attempts,
    ok: outcome.ok || expected,
    slow: warned || outcome.durationMs > slowMs,
    startedAt: new Date(t0).toISOString(),
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
    ...(!outcome.ok && outcome.stderr ? { stderrTail: outcome.stderr.slice(-500) } : {}),
    ...(expected ? { expected: true as const } : {}),
  };
  notify(traceListeners, trace);
  return outcome;
}
