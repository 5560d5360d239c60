/**
 * The Docker backend passes the backend conformance suite against the real test engine (engine a
 * of scripts/engines/docker.sh): real containers, `docker stop`/`kill`, logs through the attached
 * client, a driver SIGKILLed with its container running and a second driver recovering it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { onExternalCall } from '../../../src/util/bounded-exec.js';
import { DockerBackend } from '../../../src/backends/docker/docker-backend.js';
import { describeBackendConformance } from '../../conformance/backend.conformance.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, dockerCtx, dockerPlanned, removeHostbinImage } from './fixture.js';
import { killDriverOnceLaunched } from '../../conformance/dead-driver.js';
import { slowNvidiaSmi } from '../../conformance/slow-smi.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const driver = join(repo, 'test', 'fixtures', 'conformance', 'launch-driver.ts');
const docker = engine('docker');
const env = () => docker.childEnv();

async function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  await killDriverOnceLaunched(driver, [ledger, dir, script], {
    env: { ...env(), SFLOW_TEST_DRIVER_BACKEND: JSON.stringify(dockerPlanned()) },
    timeoutMs: 90_000,
  });
  return ledger;
}

/** a GPU task's allocation reads nvidia-smi, which here takes a minute to answer */
function slowAllocate() {
  const cleanup = slowNvidiaSmi();
  return {
    backend: new DockerBackend(dockerPlanned({ gpus_per_node: 2 }), dockerCtx(env(), { gpuTasks: true })),
    cleanup,
  };
}

/**
 * `docker stop` / `docker kill` calls the backends of this file made: the engine's stop operations
 * (one per host for a whole batch; `-H <endpoint>` may come before the verb)
 */
let engineStopCalls = 0;
const verb = (args: string[]): string | undefined => (args[0] === '-H' ? args[2] : args[0]);

describeWithEngines('Docker backend on a real engine', [docker], () => {
  let unsubscribe: (() => void) | undefined;
  beforeAll(async () => {
    // every docker CLI call of the backend is traced as it ends (util/bounded-exec.ts)
    unsubscribe = onExternalCall((t) => {
      const v = verb(t.args);
      if (v === 'stop' || v === 'kill') engineStopCalls++;
    });
    await buildHostbinImage(docker, [docker.get('DOCKER_HOST')]);
  });
  afterAll(async () => {
    unsubscribe?.();
    await removeHostbinImage(docker, [docker.get('DOCKER_HOST')]);
  });

  describeBackendConformance('docker', () => new DockerBackend(dockerPlanned(), dockerCtx(env())), {
    localProcesses: true,
    slowAllocate,
    deadDriver,
    recoverer: () => new DockerBackend(dockerPlanned(), dockerCtx(env(), { runId: 'recoverer' })),
    // the 50 containers of a batch are on one host: one `docker stop` for all of them
    engineStops: () => engineStopCalls,
  });
});
