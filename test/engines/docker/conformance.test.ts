/**
 * The Docker backend passes the backend conformance suite against the real test engine (engine a
 * of scripts/engines/docker.sh): real containers, `docker stop`/`kill`, logs through the attached
 * client, a driver SIGKILLed with its container running and a second driver recovering it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
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

describeWithEngines('Docker backend on a real engine', [docker], () => {
  beforeAll(() => buildHostbinImage(docker, [docker.get('DOCKER_HOST')]));
  afterAll(() => removeHostbinImage(docker, [docker.get('DOCKER_HOST')]));

  describeBackendConformance('docker', () => new DockerBackend(dockerPlanned(), dockerCtx(env())), {
    localProcesses: true,
    slowAllocate,
    deadDriver,
    recoverer: () => new DockerBackend(dockerPlanned(), dockerCtx(env(), { runId: 'recoverer' })),
  });
});
