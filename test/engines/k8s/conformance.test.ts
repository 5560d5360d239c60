/**
 * The Kubernetes backend passes the backend conformance suite against the emulator: exit codes,
 * environment (through a Secret), byte-exact streamed logs, SIGTERM with grace, forced stop, a
 * batched stop of 50 pods, reattaching from the ledger of a SIGKILLed driver (a real child
 * process), cancelling an allocation whose reservation pod cannot be scheduled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe } from 'vitest';
import { deleteByLabel } from '../../../src/backends/kubernetes/cleanup.js';
import { KubeApi } from '../../../src/backends/kubernetes/client.js';
import { loadKubeTarget } from '../../../src/backends/kubernetes/kube-options.js';
import { describeBackendConformance } from '../../conformance/backend.conformance.js';
import { startEmulator, type Emulator } from '../../fixtures/k8s-emulator/server.js';
import { k8sBackend } from './backend-helpers.js';
import { required, sandboxMissing, shPod } from './harness.js';
import { killDriverOnceLaunched } from '../../conformance/dead-driver.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const driver = join(repo, 'test', 'engines', 'k8s', 'fixtures', 'dead-driver.ts');
const missing = sandboxMissing();

// the emulator must exist before describeBackendConformance's hooks run: start it at module load
let emu: Emulator;
const ready = missing
  ? Promise.resolve()
  : startEmulator({ nodes: 2, gpus: 4, warnUnsupported: false }).then((e) => (emu = e));
const scratch = mkdtempSync(join(tmpdir(), 'sflow-k8s-conf-'));

async function deadDriver(dir: string, script: string): Promise<string> {
  const ledger = join(dir, `handles-${Date.now()}.jsonl`);
  await killDriverOnceLaunched(driver, [emu.kubeconfigPath, ledger, dir, `dead-${Date.now()}`, script], {
    timeoutMs: 60_000,
    settleMs: 300,
  });
  return ledger;
}

describe.skipIf(missing !== undefined && !required)(
  `Kubernetes backend${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    beforeAll(async () => {
      await ready;
    });
    afterAll(async () => {
      if (emu) {
        // the dead drivers' reservation pods: reaped by run label like `sflow recover` does
        const t = loadKubeTarget('default', { kubeconfig: emu.kubeconfigPath }, process.env);
        await deleteByLabel(new KubeApi(t), 'app.kubernetes.io/managed-by=sflow', {
          claims: false,
          mpiJobs: false,
        });
        await emu.stop();
      }
      rmSync(scratch, { recursive: true, force: true });
    });

    describeBackendConformance('kubernetes (emulator)', () => k8sBackend(emu, {}, { runDir: scratch }), {
      localProcesses: true,
      queues: true,
      operator: { name: 'conformance', type: 'k8s', config: { image: 'bash:5' } },
      // every GPU of both nodes is taken by hog pods: a reservation asking for 4 GPUs waits
      slowAllocate: () => {
        const names = ['hog-0', 'hog-1'];
        const hogs = Promise.all(
          names.map((name, i) =>
            fetch(`${emu.url}/api/v1/namespaces/default/pods`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(
                shPod(name, 'sleep 600', {
                  nodeName: `node-${i}`,
                  containers: [
                    {
                      name: 'main',
                      image: 'bash:5',
                      command: ['sleep', '600'],
                      resources: { limits: { 'nvidia.com/gpu': '4' } },
                    },
                  ],
                }),
              ),
            }),
          ),
        );
        const backend = k8sBackend(
          emu,
          { gpus_per_node: 4 },
          { runDir: scratch, gpuTasks: true, env: { ...process.env, SFLOW_SKIP_K8S_PREFLIGHT: '1' } },
        );
        return {
          backend: {
            ...backend,
            name: backend.name,
            type: backend.type,
            capabilities: () => backend.capabilities(),
            preflight: (s) => backend.preflight(s),
            allocate: async (s, p) => {
              await hogs;
              await backend.preflight(s);
              return backend.allocate(s, p);
            },
            launch: (r, s) => backend.launch(r, s),
            poll: (h, s) => backend.poll(h, s),
            stop: (h, o, s) => backend.stop(h, o, s),
            inspect: (h, s) => backend.inspect(h, s),
            recover: (h, o, s) => backend.recover(h, o, s),
            release: (s, n) => backend.release(s, n),
          },
          cleanup: () => {
            for (const name of names)
              void fetch(`${emu.url}/api/v1/namespaces/default/pods/${name}?gracePeriodSeconds=0`, {
                method: 'DELETE',
              });
          },
        };
      },
      deadDriver,
      recoverer: () => k8sBackend(emu, {}, { runDir: scratch }),
      // pod deletions the emulator served, one collection delete or one per pod alike
      engineStops: () =>
        emu
          .requests()
          .filter((r) => r.method === 'DELETE' && /\/namespaces\/[^/]+\/pods(\/[^/]+)?$/.test(r.path)).length,
    });
  },
);
