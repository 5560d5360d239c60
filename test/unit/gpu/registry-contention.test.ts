/**
 * The optimistic round of `claim` when another claim publishes at the same moment. Such a race
 * needs two processes to interleave between "publish" and "read again"; here the registry's
 * census is wrapped so that a rival record appears (or goes) exactly between those two steps.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claim } from '../../../src/gpu/registry.js';
import type { ReservationRecord } from '../../../src/gpu/records.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { failure, plant, req, tempDir } from './helpers.js';

const hook = vi.hoisted(() => ({
  calls: 0,
  /** runs before the n-th census (1: round 1 picks, 2: round 1 reads again, 3: round 2 picks, …) */
  before: undefined as ((n: number) => void) | undefined,
}));

vi.mock('../../../src/gpu/trust.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/gpu/trust.js')>();
  return {
    ...real,
    census: (dir: string) => {
      hook.before?.(++hook.calls);
      return real.census(dir);
    },
  };
});

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  hook.calls = 0;
  hook.before = undefined;
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  cleanup();
});

/** task/state of every record in the registry */
const states = () =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ReservationRecord)
    .map((r) => `${r.task}/${r.state}`)
    .sort();

/** a rival for GPU 0 (and 3), appearing right after round 1 published and gone before round 2 */
function rivalOnce(over: Partial<ReservationRecord>): string[][] {
  const seen: string[][] = [];
  let file = '';
  hook.before = (n) => {
    seen.push(states());
    if (n === 2)
      file = plant(dir, {
        task: 'rival',
        uuids: ['GPU-test-0', 'GPU-test-3'],
        indices: [0, 3],
        ...over,
      }).file;
    if (n === 3) rmSync(file);
  };
  return seen;
}

// the request's run is run-a; each rival fails exactly one of the terms that would let us share with it
const rivals: [string, () => Partial<ReservationRecord>][] = [
  ['another run', () => ({ runId: 'run-r', state: 'claiming' })],
  ['another run of this process, lent', () => ({ runId: 'run-r', state: 'lent' })],
  ['this run and process, claiming', () => ({ runId: 'run-a', state: 'claiming' })],
  [
    'this run in another process, lent',
    () => ({
      runId: 'run-a',
      state: 'lent',
      pid: process.ppid,
      pidStartTime: processStartTime(process.ppid),
    }),
  ],
  ['this run on another host, lent', () => ({ runId: 'run-a', state: 'lent', host: `not-${os.hostname()}` })],
];

describe('simultaneous claims', () => {
  it.each(rivals)(
    'withdraws when %s claims the same GPU at once, and wins the next round',
    async (_, rival) => {
      const seen = rivalOnce(rival());
      const c = await claim(req(dir, { task: 'me', want: { indices: [0] } }));
      expect(c.indices).toEqual([0]);
      expect(hook.calls).toBe(4); // two rounds
      expect(seen[1]).toEqual(['me/claiming']); // round 1 published before it read again
      expect(seen[2]).toEqual(['rival/' + String(rival().state)]); // and withdrew
      expect(states()).toEqual(['me/held']);
    },
  );

  it('shares with a lent record of its own run and process without a second round', async () => {
    const seen = rivalOnce({ runId: 'run-a', state: 'lent' });
    await claim(req(dir, { task: 'me', want: { indices: [0] } }));
    expect(hook.calls).toBe(2);
    expect(seen).toHaveLength(2);
  });

  it('retries after a random pause of 5 to 49 ms', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.999); // 5 + 44 ms
    rivalOnce({ runId: 'run-r', state: 'claiming' });
    const p = claim(req(dir, { task: 'me', want: { indices: [0] } }));
    await vi.advanceTimersByTimeAsync(48);
    expect(hook.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(hook.calls).toBe(4);
    expect((await p).indices).toEqual([0]);
  });

  it('gives up after 50 lost rounds, naming the rival', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0); // 5 ms pauses
    let file = '';
    hook.before = (n) => {
      if (n > 2 * 51) throw new Error('more than 51 rounds'); // ends a claim that would retry forever
      if (n % 2 === 0)
        file = plant(dir, {
          runId: 'run-r',
          task: 'rival',
          uuids: ['GPU-test-0'],
          indices: [0],
          state: 'claiming',
        }).file;
      else if (file) rmSync(file);
    };
    const e = await failure(claim(req(dir, { task: 'me', want: { indices: [0] } })));
    expect(hook.calls).toBe(2 * 51);
    expect(e.code).toBe('GPU_UNAVAILABLE');
    expect(e.message).toBe(
      `run 'run-r' task 'rival' (pid ${process.pid}) claimed the same GPU(s) at the same time`,
    );
  });

  it('does not retry once cancelled', async () => {
    const ac = new AbortController();
    hook.before = (n) => {
      if (n === 2) {
        plant(dir, { runId: 'run-r', task: 'rival', uuids: ['GPU-test-0'], indices: [0], state: 'claiming' });
        ac.abort();
      }
    };
    const e = await failure(claim(req(dir, { task: 'me', want: { indices: [0] }, signal: ac.signal })));
    expect(e.code).toBe('GPU_WAIT_CANCELLED');
    expect(hook.calls).toBe(2);
  });
});
