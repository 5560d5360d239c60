/**
 * The probe scheduler. No global clock: the first check runs `delay` after the attempt
 * started, the next ones `interval` after the previous one started, and a check that meets
 * the threshold resolves the loop at once, so a dependent can start within milliseconds of
 * the passing check. Readiness probes get an overall deadline; failure probes run until
 * they fire or are aborted.
 */

import type { CheckResult, ProbeLoopOptions, ProbeLoopOutcome } from './types.js';
import { sleep } from '../util/sleep.js';

export const DEFAULT_EACH_CHECK_TIMEOUT_MS = 30_000;
/** `interval: 0` is allowed by the schema; never spin faster than this */
export const MIN_INTERVAL_MS = 20;

/** `12 s`, `1.5 s`, `250 ms`, `20 min 5 s` */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  const min = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s ? `${min} min ${s} s` : `${min} min`;
}

/** Resolves at `until` (ms epoch) or when `signal` aborts, whichever comes first. */
function sleepUntil(until: number, signal?: AbortSignal): Promise<void> {
  const ms = until - Date.now();
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return sleep(ms, signal);
}

/**
 * One guarded check: aborted at its own time limit, at the overall deadline or by the
 * caller, and settled a little later even if the check ignores its signal.
 */
async function guardedCheck(
  o: ProbeLoopOptions,
  eachMs: number,
  deadline: number,
): Promise<CheckResult & { cutByDeadline: boolean }> {
  const ac = new AbortController();
  let cutByDeadline = false;
  const onAbort = () => ac.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const limit = Math.min(eachMs, deadline - Date.now());
  const timer = setTimeout(
    () => {
      cutByDeadline = Date.now() >= deadline - 1;
      ac.abort();
    },
    Math.max(0, limit),
  );
  let backstop: NodeJS.Timeout | undefined;
  try {
    const ignored = new Promise<CheckResult>((resolve) => {
      backstop = setTimeout(
        () => resolve({ ok: false, detail: `no answer within ${formatWait(eachMs)}` }),
        limit + 250,
      );
    });
    const r = await Promise.race([
      o.check.check(ac.signal, Math.max(1, limit)).catch((e: unknown) => ({
        ok: false,
        detail: e instanceof Error ? e.message : String(e),
      })),
      ignored,
    ]);
    return { ...r, cutByDeadline };
  } finally {
    clearTimeout(timer);
    clearTimeout(backstop);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

export async function runProbeLoop(o: ProbeLoopOptions): Promise<ProbeLoopOutcome> {
  const start = o.startedAt ?? Date.now();
  const interval = Math.max(MIN_INTERVAL_MS, o.intervalMs);
  const threshold = Math.max(1, Math.floor(o.threshold));
  const eachMs = Math.max(1, o.eachCheckTimeoutMs ?? DEFAULT_EACH_CHECK_TIMEOUT_MS);
  const deadline = o.deadlineMs !== undefined && o.deadlineMs > 0 ? start + o.deadlineMs : Infinity;
  let next = start + Math.max(0, o.delayMs);
  let consecutive = 0;
  let n = 0;
  let last: CheckResult | undefined;

  const stopped = (timedOut: boolean): ProbeLoopOutcome => {
    const elapsedMs = Date.now() - start;
    const lastPart = last ? `; last check: ${last.detail}` : '';
    const reason = timedOut
      ? `${o.label ?? 'probe'} ${o.check.describe()} did not pass within ${formatWait(elapsedMs)} ` +
        `(${n} check${n === 1 ? '' : 's'}${lastPart})`
      : 'aborted';
    return { passed: false, reason, timedOut, aborted: !timedOut, checks: n, elapsedMs, last };
  };

  for (;;) {
    await sleepUntil(Math.min(next, deadline), o.signal);
    if (o.signal?.aborted) return stopped(false);
    if (Date.now() >= deadline) return stopped(true);
    const at = Date.now();
    const r = await guardedCheck(o, eachMs, deadline);
    if (o.signal?.aborted) return stopped(false);
    if (r.cutByDeadline && !r.ok) return stopped(true);
    n++;
    last = { ok: r.ok, detail: r.detail };
    consecutive = r.ok ? consecutive + 1 : 0;
    o.onResult?.({ ...last, n, consecutive, at, tookMs: Date.now() - at });
    // a check that can never run again ends the loop: the caller reports the limit
    if (r.limit)
      return {
        passed: false,
        reason: r.limit,
        timedOut: false,
        aborted: false,
        checks: n,
        elapsedMs: Date.now() - start,
        last,
        limit: r.limit,
      };
    if (consecutive >= threshold) return { passed: true, checks: n, elapsedMs: Date.now() - start, last };
    next = at + interval;
  }
}
