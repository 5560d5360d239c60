/**
 * The Docker backend passes the backend conformance suite against the real test engine (engine a
 * of scripts/engines/docker.sh): real containers, `docker stop`/`kill`, logs through the attached
 * client, a driver SIGKILLed with its container running and a second driver recovering it.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { DockerBackend } from '../../../src/backends/docker/docker-backend.js';
import { resetLocalGpuCache } from '../../../src/gpu/local-topology.js';
import { describeBackendConformance } from '../../conformance/backend.conformance.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, dockerCtx, dockerPlanned, removeHostbinImage } from './fixture.js';
import { killDriverOnceLaunched } from '../../conformance/dead-driver.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const driver = join(repo, 'test', 'fixtures', 'conformance', 'docker-driver.ts');
const docker = engine('docker');
const env = () => docker.childEnv();

async function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  await killDriverOnceLaunched(driver, [ledger, dir, script], {
    env: { ...env(), SFLOW_TEST_DOCKER_BACKEND: JSON.stringify(dockerPlanned()) },
    timeoutMs: 90_000,
  });
  return ledger;
}

/** a GPU task's allocation reads nvidia-smi, which here takes a minute to answer */
function slowAllocate() {
  const bin = mkdtempSync(join(tmpdir(), 'sflow-slow-smi-'));
  writeFileSync(join(bin, 'nvidia-smi'), '#!/bin/sh\nexec sleep 60\n');
  chmodSync(join(bin, 'nvidia-smi'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path ?? ''}`;
  resetLocalGpuCache();
  return {
    backend: new DockerBackend(dockerPlanned({ gpus_per_node: 2 }), dockerCtx(env(), { gpuTasks: true })),
    cleanup: () => {
      process.env.PATH = path;
      resetLocalGpuCache();
      rmSync(bin, { recursive: true, force: true });
    },
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
