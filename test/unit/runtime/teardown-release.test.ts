/**
 * The teardown lets go of the run once its stops are done: the bound of `stopAll` is a timeout
 * signal, which Node keeps alive (with everything its listeners reach) until it fires; a listener
 * left on it pinned the whole run — tasks, handles, sinks — through the report of a big run
 * (docs/scale.md). Also: 10,000 targets of one backend are grouped in one pass.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TaskHandle } from '../../../src/backends/backend.js';
import { stopAll, type StopResult, type StopTarget } from '../../../src/runtime/teardown.js';
import { FakeBackend, task } from './fakes.js';

afterEach(() => vi.restoreAllMocks());

describe('stopAll', () => {
  it('leaves no listener on its bound once every stop is done, and stops every target in one batch', async () => {
    const made: AbortSignal[] = [];
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    vi.spyOn(AbortSignal, 'timeout').mockImplementation((ms: number) => {
      const s = timeout(ms);
      made.push(s);
      return s;
    });
    const names = Array.from({ length: 10_000 }, (_, i) => `t${i}`);
    const backend = new FakeBackend({});
    // every handle runs in the fake engine until stopped
    const handles: TaskHandle[] = [];
    for (const n of names) {
      const t = task(n);
      handles.push(
        await backend.launch({
          task: t,
          attempt: 1,
          specs: t.launch,
          baseEnv: {},
          cwd: '/',
          runDir: '/',
          record: () => undefined,
        }),
      );
    }
    const targets: StopTarget[] = handles.map((h) => ({ task: h.task, attempt: 1, backend, handle: h }));
    const stopped: StopResult[] = [];
    await stopAll(targets, 50, 60_000, (r) => stopped.push(r));

    expect(stopped).toHaveLength(names.length);
    expect(new Set(backend.stops)).toEqual(new Set(names));
    expect(made.length).toBeGreaterThan(0);
    // the bound has not fired (60 s): nothing may still listen to it
    for (const s of made) {
      expect(s.aborted).toBe(false);
      expect(getEventListeners(s, 'abort')).toHaveLength(0);
    }
  });
});
