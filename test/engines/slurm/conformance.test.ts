/**
 * The Slurm backend passes the backend conformance suite against the real test cluster: every test
 * task is an `srun --overlap` job step of a real allocation (salloc --no-shell), started by an srun
 * client on the driver; stop is scancel; the dead driver is a child `node` that is SIGKILLed after
 * its step started, and a fresh backend instance recovers the step from its ledger.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { SlurmBackend } from '../../../src/backends/slurm/slurm-backend.js';
import { srunArgv } from '../../../src/operators/srun.js';
import { describeBackendConformance } from '../../conformance/backend.conformance.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, backendCtx, cancelNamed, plannedSlurm, slurm, useClusterEnv } from './slurm-helpers.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const loader = join(repo, 'test', 'fixtures', 'ts-loader', 'register.js');
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
function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', loader, driver, ledger, dir, script, `${name}-dead`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: slurm.childEnv({ SFLOW_LAUNCHER: 'inline' }),
    });
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`driver did not launch in time: ${err}`));
    }, 90_000);
    child.stderr.on('data', (d) => (err += String(d)));
    child.stdout.on('data', (d) => {
      if (!String(d).includes('launched')) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      child.once('exit', () => resolve(ledger));
    });
  });
}

describeWithEngines('Slurm backend conformance', [slurm], () => {
  useClusterEnv();
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
