import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalBackend, localNodes } from '../../src/backends/local/local-backend.js';
import { handleKey, type BackendContext, type TaskHandle } from '../../src/backends/backend.js';
import { LOCAL_CAPABILITIES, plannedBackend } from '../helpers/backends.js';
import { plannedTask } from '../helpers/planned-task.js';
import { describeBackendConformance } from './backend.conformance.js';
import { killDriverOnceLaunched } from './dead-driver.js';
import { until } from './procs.js';
import { slowNvidiaSmi } from './slow-smi.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const driver = join(repo, 'test', 'fixtures', 'conformance', 'launch-driver.ts');

const ctx = (over: Partial<BackendContext> = {}): BackendContext => ({
  runId: 'conformance',
  runDir: tmpdir(),
  log: () => undefined,
  options: {},
  env: process.env,
  gpuTasks: false,
  ...over,
});

/**
 * Runs the dying driver in a child `node`, SIGKILLs it once it launched; the ledger stays. It
 * spawns inline (no launcher): with the launcher, the lifeline would stop the task before recover
 * looks; this is the case recover exists for (lifeline gone too, e.g. both killed at once).
 */
async function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  await killDriverOnceLaunched(driver, [ledger, dir, script], {
    env: { ...process.env, SFLOW_LAUNCHER: 'inline' },
    timeoutMs: 60_000,
  });
  return ledger;
}

/** nvidia-smi that takes a minute to answer: allocation waits on GPU discovery. */
function slowAllocate() {
  const cleanup = slowNvidiaSmi();
  return {
    backend: new LocalBackend(plannedBackend({ config: { gpus_per_node: 2 } }), ctx({ gpuTasks: true })),
    cleanup,
  };
}

// No `engineStops` hook: the local backend has no engine to count. Each attempt is its own process
// group and a signal reaches one group per kill(2); what batching means here is one pass that
// signals every group of the batch before waiting on any ("one signal pass", checked below).
describeBackendConformance(
  'local',
  () => new LocalBackend(plannedBackend({ config: { nodes: 2, gpus_per_node: 4 } }), ctx()),
  {
    localProcesses: true,
    slowAllocate,
    deadDriver,
    recoverer: () => new LocalBackend(plannedBackend(), ctx({ runId: 'recoverer' })),
  },
);

describe('local backend specifics', () => {
  it('allocates synthetic localhost nodes', async () => {
    const b = new LocalBackend(
      plannedBackend({ name: 'box', config: { nodes: 3, gpus_per_node: 4 } }),
      ctx(),
    );
    const a = await b.allocate(new AbortController().signal, () => undefined);
    expect(a).toMatchObject({ id: 'local', owned: false });
    expect(a.nodes).toEqual([
      { name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: 4 },
      { name: 'localhost-1', ip: '127.0.0.1', index: 1, numGpus: 4 },
      { name: 'localhost-2', ip: '127.0.0.1', index: 2, numGpus: 4 },
    ]);
    expect(localNodes(0, null)).toEqual([{ name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: null }]);
    expect(b.capabilities()).toEqual(LOCAL_CAPABILITIES);
    expect(b.capabilities()).toMatchObject({ defaultOperator: 'bash', failFastDefault: false, batch: false });
  });
});

describe('local backend: a batched stop is one signal pass', () => {
  it('every group of the batch gets SIGTERM before the stop waits on any of them', async () => {
    // Each task, on SIGTERM, marks itself and exits only once all of them are marked: a stop that
    // waited on one group before signalling the next would hit the grace and SIGKILL it.
    const N = 20;
    const dir = mkdtempSync(join(tmpdir(), 'sflow-local-pass-'));
    const marks = join(dir, 'marks');
    mkdirSync(marks);
    const b = new LocalBackend(plannedBackend(), ctx({ runDir: dir }));
    const never = new AbortController().signal;
    let handles: TaskHandle[] = [];
    try {
      await b.allocate(never, () => undefined);
      const script =
        `trap 'touch "$MARKS/$TASK"; until f=("$MARKS"/*); [ \${#f[@]} -ge ${N} ]; do sleep 0.1; done; echo barrier; exit 0' TERM; ` +
        'echo up; sleep 600 & wait';
      const tasks = Array.from({ length: N }, (_, i) => {
        mkdirSync(join(dir, `p${i}`));
        return plannedTask(
          `p${i}`,
          { argv: ['bash', '-c', script], script, env: { MARKS: marks, TASK: `p${i}` } },
          dir,
        );
      });
      handles = await Promise.all(
        tasks.map((task) =>
          b.launch(
            {
              task,
              attempt: 1,
              specs: task.launch,
              baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
              cwd: dir,
              runDir: dir,
              record: () => undefined,
            },
            never,
          ),
        ),
      );
      const log = (i: number) => {
        try {
          return readFileSync(tasks[i].logPath, 'utf8');
        } catch {
          return '';
        }
      };
      await until(() => tasks.every((_, i) => log(i).includes('up')), 20_000, 'every task up');
      const got = await b.stop(handles, { graceMs: 20_000 }, AbortSignal.timeout(60_000));
      expect(readdirSync(marks).sort()).toEqual(tasks.map((t) => t.name).sort());
      for (const [i, h] of handles.entries()) {
        expect(got.get(handleKey(h))).toMatchObject({ gone: true, signals: ['SIGTERM'] });
        expect(log(i)).toContain('barrier');
      }
    } finally {
      await b.stop(handles, { graceMs: 0, force: true }, AbortSignal.timeout(30_000));
      await b.release(never);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
