/**
 * The test-only remote backend (test/helpers/remote-backend.ts: queue delay, latency, late remote
 * ids) passes the same conformance suite as the local backend.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HandleLedger } from '../../src/events/handle-ledger.js';
import { FakeEngine, RemoteBackend } from '../helpers/remote-backend.js';
import { plannedTask } from '../helpers/planned-task.js';
import { describeBackendConformance } from './backend.conformance.js';

const engine = new FakeEngine({ queueMs: 60, latencyMs: 5, idDelayMs: 120 });
const never = new AbortController().signal;

describeBackendConformance('remote (fake engine)', () => new RemoteBackend(engine), {
  localProcesses: true,
  queues: true,
  slowAllocate: () => ({ backend: new RemoteBackend(new FakeEngine({ allocateMs: 60_000 })) }),
  // the "driver" is a backend instance that is dropped after launching (its engine keeps the job)
  deadDriver: async (dir, script) => {
    const ledger = new HandleLedger(join(dir, `handles-${Date.now()}.jsonl`));
    const doomed = new RemoteBackend(engine, 'remote', 'dead-driver');
    const { nodes } = await doomed.allocate(never, () => undefined);
    mkdirSync(join(dir, 'victim'), { recursive: true });
    const task = plannedTask('victim', { argv: ['bash', '-c', script], script, nodes }, dir);
    await doomed.launch(
      {
        task,
        attempt: 1,
        specs: task.launch,
        baseEnv: { PATH: process.env.PATH ?? '' },
        cwd: dir,
        runDir: dir,
        record: (h) => ledger.write('launched', h),
      },
      never,
    );
    ledger.close();
    await new Promise((r) => setTimeout(r, 400)); // queued, then running
    return ledger.path;
  },
  recoverer: () => new RemoteBackend(engine, 'remote', 'recoverer'),
  // the engine's own cancel calls (one call cancels a list of jobs)
  engineStops: () => engine.calls.cancel,
});
