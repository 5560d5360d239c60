/**
 * What the Docker backend's engine tests share: a test image and backend settings. The fixture's
 * image (busybox, `docker import`ed) has no bash or python3, so the tests build `sflowtest/hostbin`
 * from it (offline: `FROM` a local image, one `ENV PATH`) and bind-mount this machine's `/usr`,
 * `/lib` and `/lib64` read-only: containers run the host's bash and python3. Honest for what is
 * tested (the engine really runs the containers); an image that ships bash needs no mounts.
 */
import type { BackendContext } from '../../../src/backends/backend.js';
import { dockerKind } from '../../../src/backends/docker/kind.js';
import type { PlannedBackend } from '../../../src/plan/types.js';
import type { Engine } from '../helpers/engines.js';

export const HOSTBIN_IMAGE = `sflowtest/hostbin:${process.pid}`;
export const HOST_MOUNTS = ['/usr:/usr:ro', '/lib:/lib:ro', '/lib64:/lib64:ro'];

/** builds the test image on each endpoint (idempotent per process) */
export async function buildHostbinImage(docker: Engine, hosts: string[]): Promise<void> {
  const base = docker.get('SFLOW_TEST_DOCKER_IMAGE');
  for (const host of hosts) {
    const r = await docker.exec('docker', ['-H', host, 'build', '-q', '-t', HOSTBIN_IMAGE, '-'], {
      input: `FROM ${base}\nENV PATH=/usr/local/bin:/usr/bin:/bin\n`,
      timeout: 120_000,
    });
    if (r.exitCode !== 0) throw new Error(`docker build on ${host}: ${String(r.stderr)}`);
  }
}

export async function removeHostbinImage(docker: Engine, hosts: string[]): Promise<void> {
  for (const host of hosts) await docker.exec('docker', ['-H', host, 'rmi', '-f', HOSTBIN_IMAGE]);
}

export function dockerPlanned(config: Record<string, unknown> = {}, name = 'dk'): PlannedBackend {
  return {
    name,
    type: 'docker',
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: { image: HOSTBIN_IMAGE, mounts: HOST_MOUNTS, extra_args: ['--network=host'], ...config },
    capabilities: dockerKind.capabilities,
  };
}

export function dockerCtx(env: NodeJS.ProcessEnv, over: Partial<BackendContext> = {}): BackendContext {
  return {
    runId: 'conformance',
    runDir: '/nonexistent',
    log: () => undefined,
    options: {},
    env,
    gpuTasks: false,
    ...over,
  };
}
