import { describe, expect, it } from 'vitest';
import { Slots } from '../../../src/util/slots.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('Slots', () => {
  it('grants at most `size` places, in arrival order, and a release lets the next one in', async () => {
    const s = new Slots(2);
    const got: number[] = [];
    const releases = new Map<number, () => void>();
    for (let i = 0; i < 5; i++)
      void s.acquire().then((release) => {
        got.push(i);
        releases.set(i, release);
      });
    await tick();
    expect(got).toEqual([0, 1]);
    expect(s.taken).toBe(2);
    expect(s.waiting).toBe(3);
    releases.get(1)?.();
    releases.get(1)?.(); // twice: still one place
    await tick();
    expect(got).toEqual([0, 1, 2]);
    expect(s.taken).toBe(2);
    releases.get(0)?.();
    releases.get(2)?.();
    await tick();
    expect(got).toEqual([0, 1, 2, 3, 4]);
    releases.get(3)?.();
    releases.get(4)?.();
    expect(s.taken).toBe(0);
    expect(s.waiting).toBe(0);
  });

  it('a waiter whose signal aborts leaves the line with the reason and takes no place', async () => {
    const s = new Slots(1);
    const first = await s.acquire();
    const ac = new AbortController();
    const gone = s.acquire(ac.signal);
    let thirdIn = false;
    const third = s.acquire().then((r) => {
      thirdIn = true;
      return r;
    });
    ac.abort(new Error('run stopping'));
    await expect(gone).rejects.toThrow('run stopping');
    expect(s.waiting).toBe(1);
    first();
    (await third)();
    expect(thirdIn).toBe(true);
    expect(s.taken).toBe(0);
    await expect(s.acquire(ac.signal)).rejects.toThrow('run stopping');
    expect(s.taken).toBe(0);
  });

  it('10,000 callers at once: never more than `size` inside, every one gets its turn', async () => {
    const s = new Slots(64);
    let inside = 0;
    let most = 0;
    const work = Array.from({ length: 10_000 }, async () => {
      const release = await s.acquire();
      inside++;
      most = Math.max(most, inside);
      await tick();
      inside--;
      release();
    });
    await Promise.all(work);
    expect(most).toBe(64);
    expect(s.taken).toBe(0);
  });
});
