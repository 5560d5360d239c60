/**
 * A pause that an AbortSignal cuts short: resolves after `ms`, or at once when `signal` aborts
 * (never rejects). Its abort listener is removed either way, so a long-lived signal shared by
 * many pauses (a retry loop, a poll loop) does not collect them.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
