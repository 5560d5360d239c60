/**
 * Many waiters on one long-lived AbortSignal (a run's stop signal, a pod's stream signal, a
 * batch's signal shared by a thousand calls) without piling listeners onto it: each signal gets
 * ONE real 'abort' listener, which calls the callbacks registered here. Node warns
 * (`MaxListenersExceededWarning`) past 10 listeners on one signal, and a signal with thousands of
 * listeners costs O(n) on every add and remove; here an add and a remove are O(1) (a Set) and the
 * real listener goes away with the last callback.
 */
const fans = new WeakMap<AbortSignal, { calls: Set<() => void>; fire: () => void }>();

/**
 * Calls `fn` once when `signal` aborts (at once, synchronously, if it already has). Returns the
 * removal, to call when the waiter is done; calling it twice, or after the abort, is harmless.
 */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  let fan = fans.get(signal);
  if (!fan) {
    const calls = new Set<() => void>();
    const fire = () => {
      fans.delete(signal);
      for (const f of [...calls]) f();
      calls.clear();
    };
    fan = { calls, fire };
    fans.set(signal, fan);
    signal.addEventListener('abort', fire, { once: true });
  }
  // a wrapper of its own, so one function registered twice is two waiters
  const call = () => fn();
  const f = fan;
  f.calls.add(call);
  return () => {
    if (!f.calls.delete(call) || f.calls.size > 0) return;
    // the last waiter left: the real listener goes too (a later waiter makes a new one)
    if (fans.get(signal) === f) fans.delete(signal);
    signal.removeEventListener('abort', f.fire);
  };
}
