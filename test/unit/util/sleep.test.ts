import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../src/util/sleep.js';

describe('sleep', () => {
  it('leaves no abort listener on a shared signal once each pause is over', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 50; i++) await sleep(1, ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    setMaxListeners(0, ac.signal); // 50 pauses at once below: 50 listeners meanwhile, by design
    await Promise.all(Array.from({ length: 50 }, () => sleep(1, ac.signal)));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('ends at once when the signal aborts, and removes its listener', async () => {
    const ac = new AbortController();
    let done = false;
    const p = sleep(60_000, ac.signal).then(() => (done = true));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await p;
    expect(done).toBe(true);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('resolves without waiting when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(sleep(60_000, ac.signal)).resolves.toBeUndefined();
  });
});
