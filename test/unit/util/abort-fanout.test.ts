/**
 * One shared AbortSignal with a thousand waiters: bounded calls (the Kubernetes client's path)
 * and the fan-out itself keep ONE real listener on it, so Node never prints
 * `MaxListenersExceededWarning`, every waiter still hears the abort, and a waiter that is done
 * leaves nothing behind.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { onAbort } from '../../../src/util/abort-fanout.js';
import { boundedCall } from '../../../src/util/bounded-call.js';

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);

/** listeners Node counts on the signal (what its MaxListeners warning is about) */
const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/** lets process.emitWarning (delivered on a later tick) arrive */
const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('abort fan-out', () => {
  it('1,000 bounded calls waiting on one signal: no MaxListenersExceededWarning, one listener, all cut short', async () => {
    process.on('warning', onWarning);
    const ac = new AbortController();
    const calls = Array.from({ length: 1000 }, (_, i) =>
      boundedCall(
        'fake-api',
        ['get', 'pods', `p${i}`],
        (signal) =>
          new Promise<string>((resolve, reject) => {
            signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
        { timeoutMs: 60_000, signal: ac.signal },
      ),
    );
    await settle();
    expect(abortListeners(ac.signal)).toBe(1);
    ac.abort();
    const out = await Promise.allSettled(calls);
    expect(out.filter((o) => o.status === 'rejected')).toHaveLength(1000);
    await settle();
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('1,000 bounded calls that answer leave no listener on the shared signal', async () => {
    process.on('warning', onWarning);
    const ac = new AbortController();
    const got = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        boundedCall('fake-api', ['get', 'pods', `p${i}`], async () => i, {
          timeoutMs: 60_000,
          signal: ac.signal,
        }),
      ),
    );
    expect(got[999]).toBe(999);
    expect(abortListeners(ac.signal)).toBe(0);
    await settle();
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('calls each waiter once, at once when already aborted, never after its removal', () => {
    const ac = new AbortController();
    const seen: string[] = [];
    const offA = onAbort(ac.signal, () => seen.push('a'));
    onAbort(ac.signal, () => seen.push('b'));
    const offC = onAbort(ac.signal, () => seen.push('c'));
    offC();
    offC();
    expect(abortListeners(ac.signal)).toBe(1);
    ac.abort();
    offA();
    expect(seen).toEqual(['a', 'b']);
    onAbort(ac.signal, () => seen.push('late'));
    expect(seen).toEqual(['a', 'b', 'late']);
    expect(abortListeners(ac.signal)).toBe(0);
  });

  it('the last removal takes the real listener away; a new waiter brings a new one', () => {
    const ac = new AbortController();
    const offs = Array.from({ length: 50 }, () => onAbort(ac.signal, () => undefined));
    expect(abortListeners(ac.signal)).toBe(1);
    for (const off of offs) off();
    expect(abortListeners(ac.signal)).toBe(0);
    let fired = 0;
    onAbort(ac.signal, () => fired++);
    expect(abortListeners(ac.signal)).toBe(1);
    ac.abort();
    expect(fired).toBe(1);
  });
});
