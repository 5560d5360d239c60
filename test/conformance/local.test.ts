import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalBackend, localNodes } from '../../src/backends/local/local-backend.js';
import type { BackendContext } from '../../src/backends/backend.js';
import { LOCAL_CAPABILITIES, plannedBackend } from '../helpers/backends.js';
import { describeBackendConformance } from './backend.conformance.js';
import { killDriverOnceLaunched } from './dead-driver.js';
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
