/**
 * A pushed exit of an attempt whose launch has not returned yet (a task that ends at once, its
 * start and exit in one read from the launcher) is kept and delivered once the handle is added;
 * so is a pushed start (a Kubernetes multi-pod launch whose leader pod runs before the launch
 * has created its last pod: the watch reports that change once). A status call that never answers
 * is cut at its bound even when the garbage collector runs while it waits.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  HANDLE_VERSION,
  type Backend,
  type HandleStatus,
  type TaskHandle,
  type WatchHooks,
} from '../../../src/backends/backend.js';
import { HandleWatch } from '../../../src/runtime/handle-watch.js';

const handle = (task: string): TaskHandle => ({
  v: HANDLE_VERSION,
  backend: 'b',
  type: 'local',
  runId: 'r',
  task,
  attempt: 1,
  state: 'RUNNING',
  nodes: [],
  engine: { kind: 'local' },
  remoteIds: [],
  submittedAt: new Date(0).toISOString(),
  logPath: '/dev/null',
});

/** a backend that pushes statuses: the test calls the watch hooks HandleWatch gave it */
function pushingBackend(): { backend: Backend; hooks: () => WatchHooks } {
  let hooks: WatchHooks | undefined;
  const backend = {
    name: 'b',
    capabilities: () => ({ pollIntervalMs: 1000 }),
    watch: (h: WatchHooks) => (hooks = h),
  } as unknown as Backend;
  return { backend, hooks: () => hooks! };
}

describe('HandleWatch', () => {
  it('delivers an exit pushed before the handle was added, after the add, once', async () => {
    const { backend, hooks: pushed } = pushingBackend();
    const seen: Array<[string, HandleStatus]> = [];
    const w = new HandleWatch({ onStatus: (h, s) => seen.push([h.task, s]), onPollError: () => undefined });
    w.attach(backend);
    const exit: HandleStatus = { state: 'EXITED', exit: { code: 0, signal: null } };
    pushed().onStatus(handle('quick'), exit);
    pushed().onStatus(handle('never-added'), exit);
    expect(seen).toEqual([]);
    const h = handle('quick');
    w.add(backend, h);
    expect(seen).toEqual([]); // not inside add: the caller finishes its own bookkeeping first
    await Promise.resolve();
    expect(seen).toEqual([['quick', exit]]);
    await w.close();
  });

  it('delivers a start pushed before the handle was added (a watch pushes it only once), and keeps an exit over a later start', async () => {
    const { backend, hooks: pushed } = pushingBackend();
    const seen: Array<[string, string]> = [];
    const w = new HandleWatch({
      onStatus: (h, s) => seen.push([h.task, s.state]),
      onPollError: () => undefined,
    });
    w.attach(backend);
    pushed().onStatus(handle('leader-ran-early'), { state: 'RUNNING' });
    pushed().onStatus(handle('ended'), { state: 'EXITED', exit: { code: 0, signal: null } });
    pushed().onStatus(handle('ended'), { state: 'RUNNING' });
    w.add(backend, handle('leader-ran-early'));
    w.add(backend, handle('ended'));
    await Promise.resolve();
    expect(seen).toEqual([
      ['leader-ran-early', 'RUNNING'],
      ['ended', 'EXITED'],
    ]);
    await w.close();
  });

  it('cuts a status call that never answers at its bound, also when the garbage collector runs meanwhile', async () => {
    // Node 20 could collect an AbortSignal.timeout() held only by AbortSignal.any(): the bound
    // never fired and a hung engine call hung the run (seen under CI's load, where GC runs often)
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let calls = 0;
    const backend = {
      name: 'b',
      capabilities: () => ({ pollIntervalMs: 10 }),
      poll: (_h: TaskHandle[], signal: AbortSignal) =>
        new Promise((_, reject) => {
          calls++;
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    } as unknown as Backend;
    const errors: string[] = [];
    const w = new HandleWatch({
      onStatus: () => undefined,
      onPollError: (_b, why) => errors.push(why),
      pollTimeoutMs: 300,
    });
    w.add(backend, handle('hung'));
    const deadline = Date.now() + 20_000;
    while (errors.length < 2 && Date.now() < deadline) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    await w.close();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(errors.slice(0, 2)).toEqual([
      'status call timed out after 300 ms',
      'status call timed out after 300 ms',
    ]);
  }, 30_000);
});
