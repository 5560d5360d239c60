import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { boundedCall } from '../../../src/util/bounded-call.js';

describe('boundedCall', () => {
  it('leaves no abort listener on a long-lived signal after 50 calls, retries included', async () => {
    const run = new AbortController().signal;
    for (let i = 0; i < 50; i++) {
      let tries = 0;
      const v = await boundedCall(
        'test',
        ['call', String(i)],
        () => (++tries === 1 ? Promise.reject(new Error('flaky')) : Promise.resolve(i)),
        { timeoutMs: 5_000, retries: 1, retryDelayMs: 1, signal: run },
      );
      expect(v).toBe(i);
      expect(getEventListeners(run, 'abort')).toHaveLength(0);
    }
  });

  it('a call that times out also removes its listener', async () => {
    const run = new AbortController().signal;
    await expect(
      boundedCall('test', ['hang'], () => new Promise<never>(() => undefined), {
        timeoutMs: 20,
        signal: run,
      }),
    ).rejects.toThrow(/did not answer/);
    expect(getEventListeners(run, 'abort')).toHaveLength(0);
  });
});
