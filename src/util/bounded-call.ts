/**
 * The in-process sibling of bounded-exec.ts for calls that go through a client library instead
 * of a subprocess (the Kubernetes API through @kubernetes/client-node): a hard timeout (an
 * AbortSignal the call must honour, plus a race so a call that ignores it still settles),
 * retries only when the caller says the call is safe to repeat, a live warning when it is slow,
 * and one trace row per call for "External Command Health" and command_trace.jsonl. Unlike
 * boundedExec it rejects when the call fails (with the last error).
 */
import { reportExternalCall, reportSlowCall, SLOW_CALL_MS, type ExternalCallTrace } from './bounded-exec.js';
import { errorMessage } from './errors.js';
import { onAbort } from './abort-fanout.js';
import { sleep } from './sleep.js';

export interface BoundedCallOptions {
  timeoutMs: number;
  /** extra attempts after the first (default 0); only for calls safe to repeat */
  retries?: number;
  retryDelayMs?: number;
  /** which failures to retry (default: every failure but a timeout of the caller's signal) */
  retryOn?: (e: unknown) => boolean;
  signal?: AbortSignal;
  slowMs?: number;
  /** a failure that is an expected answer (404 on a delete): traced as ok */
  expected?: (e: unknown) => boolean;
}

export class CallTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${Math.round(ms / 1000)}s`);
    this.name = 'CallTimeoutError';
  }
}

/** Runs `fn` within the bounds given; `tool` and `args` name the call in the trace (no secrets). */
export async function boundedCall<T>(
  tool: string,
  args: string[],
  fn: (signal: AbortSignal) => Promise<T>,
  o: BoundedCallOptions,
): Promise<T> {
  const t0 = Date.now();
  const slowMs = o.slowMs ?? SLOW_CALL_MS;
  let warned = false;
  let attempt = 0;
  const slowTimer = setTimeout(() => {
    warned = true;
    reportSlowCall({ tool, args, elapsedMs: Date.now() - t0, attempt });
  }, slowMs);
  slowTimer.unref();
  let delay = o.retryDelayMs ?? 500;
  let timedOut = false;
  let lastError: unknown;
  let result: { value: T } | undefined;
  try {
    for (attempt = 1; ; attempt++) {
      const ac = new AbortController();
      // one shared listener per caller's signal, however many calls wait on it (abort-fanout.ts)
      const unfollow = onAbort(o.signal, () => ac.abort(o.signal?.reason));
      let timer: NodeJS.Timeout | undefined;
      try {
        const limit = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => {
              timedOut = true;
              const e = new CallTimeoutError(`${tool} ${args.slice(0, 3).join(' ')}`, o.timeoutMs);
              ac.abort(e);
              reject(e);
            },
            Math.max(1, o.timeoutMs),
          );
          ac.signal.addEventListener('abort', () => reject(ac.signal.reason as Error), { once: true });
        });
        if (o.signal?.aborted) throw o.signal.reason;
        result = { value: await Promise.race([fn(ac.signal), limit]) };
        break;
      } catch (e) {
        lastError = e;
        if (o.expected?.(e)) break;
        const again = attempt <= (o.retries ?? 0) && !o.signal?.aborted && (o.retryOn?.(e) ?? true);
        if (!again) break;
      } finally {
        clearTimeout(timer);
        unfollow();
      }
      await sleep(delay, o.signal);
      delay *= 2;
    }
  } finally {
    clearTimeout(slowTimer);
  }
  const durationMs = Date.now() - t0;
  const ok = result !== undefined || (lastError !== undefined && o.expected?.(lastError) === true);
  const trace: ExternalCallTrace = {
    tool,
    args,
    exitCode: ok ? 0 : null,
    signal: null,
    durationMs,
    timedOut: !ok && timedOut,
    attempts: attempt,
    ok,
    slow: warned || durationMs > slowMs,
    startedAt: new Date(t0).toISOString(),
    ...(!ok ? { stderrTail: headAndTail(errorMessage(lastError)) } : {}),
  };
  reportExternalCall(trace);
  if (result) return result.value;
  throw lastError;
}

/**
 * A client library's error for the trace, within 500 characters: its start (an API error's status
 * and message come first) and its end.
 */
function headAndTail(text: string): string {
  return text.length <= 500 ? text : `${text.slice(0, 300)} … ${text.slice(-197)}`;
}
