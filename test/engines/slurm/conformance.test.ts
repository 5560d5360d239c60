/**
 * The Slurm backend passes the backend conformance suite against the real test cluster: every test
 * task is an `srun --overlap` job step of a real allocation (salloc --no-shell), started by an srun
 * client on the driver; stop is scancel; the dead driver is a child `node` that is SIGKILLed after
 * its step started, and a fresh backend instance recovers the step from its ledger.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { SlurmBackend } from '../../../src/backends/slurm/slurm-backend.js';
import { srunArgv } from '../../../src/operators/srun.js';
import { onExternalCall } from '../../../src/util/bounded-exec.js';
import { describeBackendConformance } from '../../conformance/backend.conformance.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, backendCtx, cancelNamed, plannedSlurm, slurm, useClusterEnv } from './slurm-helpers.js';
import { killDriverOnceLaunched } from '../../conformance/dead-driver.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const driver = join(repo, 'test', 'fixtures', 'conformance', 'slurm-driver.ts');
const scratch = mkdtempSync(join(tmpdir(), 'sflow-slurm-conf-'));
const name = `${TAG}-conf`;
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(name);
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Runs the dying driver in a child `node`, SIGKILLs it once its step runs; the ledger stays. It
 * spawns inline (no launcher, so no lifeline that would stop the srun client when the driver dies):
 * the case recover exists for.
 */
async function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  await killDriverOnceLaunched(driver, [ledger, dir, script, `${name}-dead`], {
    env: slurm.childEnv({ SFLOW_LAUNCHER: 'inline' }),
    timeoutMs: 90_000,
  });
  return ledger;
}

/**
 * `scancel --signal=TERM` calls the backends of this file made: the engine's stop operations (a
 * retry of one call is the same operation)
 */
let termCancels = 0;

describeWithEngines('Slurm backend conformance', [slurm], () => {
  useClusterEnv();
  let unsubscribe: (() => void) | undefined;
  beforeAll(() => {
    // every Slurm CLI call of the backend is traced as it ends (util/bounded-exec.ts)
    unsubscribe = onExternalCall((t) => {
      if (t.tool === 'scancel' && t.args.includes('--signal=TERM')) termCancels++;
    });
  });
  afterAll(() => unsubscribe?.());
  const made: SlurmBackend[] = [];
  const make = (config: Record<string, unknown> = {}) => {
    const b = new SlurmBackend(plannedSlurm({ job_name: name, ...config }), backendCtx(scratch));
    made.push(b);
    return b;
  };
  describeBackendConformance('slurm', () => make(), {
    localProcesses: true,
    queues: true,
    slowAllocate: () => ({ backend: make({ extra_args: ['--begin=now+3600'] }) }),
    deadDriver,
    recoverer: () => new SlurmBackend(plannedSlurm({ job_name: name }), backendCtx(scratch)),
    // one TERM pass over every step of the batch is one scancel (a KILL pass for what outlives the
    // grace would be a second, separate operation)
    engineStops: () => termCancels,
    taskArgv: (script, task, nodes) =>
      srunArgv({
        task,
        type: 'srun',
        config: { label: false },
        script,
        nodes,
        gpus: null,
        env: {},
        allocationId: made[0]?.jobId ?? '0',
        backendConfig: {},
      }),
  });
});
