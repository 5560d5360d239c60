/**
 * A pushed exit of an attempt whose launch has not returned yet (a task that ends at once, its
 * start and exit in one read from the launcher) is kept and delivered once the handle is added.
 */
import { describe, expect, it } from 'vitest';
import type { Backend, HandleStatus, TaskHandle, WatchHooks } from '../../../src/backends/backend.js';
import { HandleWatch } from '../../../src/runtime/handle-watch.js';

const handle = (task: string): TaskHandle => ({
  v: 1,
  backend: 'b',
  type: 'local',
  runId: 'r',
  task,
  attempt: 1,
  state: 'RUNNING',
  nodes: [],
  remoteIds: [],
  submittedAt: new Date(0).toISOString(),
  logPath: '/dev/null',
});

describe('HandleWatch', () => {
  it('delivers an exit pushed before the handle was added, after the add, once', async () => {
    let hooks: WatchHooks | undefined;
    const backend = {
      name: 'b',
      capabilities: () => ({ pollIntervalMs: 1000 }),
      watch: (h: WatchHooks) => (hooks = h),
    } as unknown as Backend;
    const seen: Array<[string, HandleStatus]> = [];
    const w = new HandleWatch({ onStatus: (h, s) => seen.push([h.task, s]), onPollError: () => undefined });
    w.attach(backend);
    const exit: HandleStatus = { state: 'EXITED', exit: { code: 0, signal: null } };
    hooks!.onStatus(handle('quick'), exit);
    hooks!.onStatus(handle('never-added'), exit);
    expect(seen).toEqual([]);
    const h = handle('quick');
    w.add(backend, h);
    expect(seen).toEqual([]); // not inside add: the caller finishes its own bookkeeping first
    await Promise.resolve();
    expect(seen).toEqual([['quick', exit]]);
    await w.close();
  });
});
