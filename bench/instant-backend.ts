/** A backend that launches nothing: every attempt "exits 0" at once (pushed through watch), for engine-only benchmarks. */
import {
  HANDLE_VERSION,
  handleKey,
  type Backend,
  type TaskHandle,
  type WatchHooks,
} from '../src/backends/backend.js';
import { localKind } from '../src/backends/local/kind.js';

export function instantBackend(): Backend {
  const watchers = new Set<WatchHooks>();
  return {
    name: 'local',
    type: 'local',
    capabilities: () => ({ ...localKind.capabilities, monitor: false }),
    preflight: async () => undefined,
    allocate: async () => ({ id: 'bench', nodes: [], owned: false }),
    launch: async (req): Promise<TaskHandle> => {
      const h: TaskHandle = {
        v: HANDLE_VERSION,
        backend: 'local',
        type: 'local',
        runId: 'bench',
        task: req.task.name,
        attempt: req.attempt,
        state: 'RUNNING',
        nodes: [],
        engine: { kind: 'local' },
        remoteIds: [],
        submittedAt: '',
        logPath: req.task.logPath,
      };
      setImmediate(() => {
        for (const w of watchers) w.onStatus(h, { state: 'EXITED', exit: { code: 0, signal: null } });
      });
      return h;
    },
    watch: (hooks, signal) => {
      watchers.add(hooks);
      signal.addEventListener('abort', () => watchers.delete(hooks), { once: true });
    },
    poll: async () => new Map(),
    stop: async (handles) =>
      new Map(
        handles.map((h) => [handleKey(h), { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 }]),
      ),
    inspect: async () => ({ alive: false, state: 'EXITED' }),
    recover: async () => ({ found: false, detail: 'bench' }),
    release: async () => undefined,
  };
}
