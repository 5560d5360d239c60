/**
 * Kubernetes emulator capacity: how long 50 pods (each with a ConfigMap script volume and a
 * Secret envFrom, as sflow's task pods have) take from create to Running, to Succeeded, and to
 * gone after a delete-collection, on 4 nodes × 8 GPUs; one watch, no per-pod polling.
 *
 * Run (no build; Node 20, root for the namespaces):
 *   node --import ./test/fixtures/ts-loader/register.js bench/k8s-emulator.ts [pods]
 */
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { startEmulator } from '../test/fixtures/k8s-emulator/server.js';

const PODS = Number(process.argv[2] ?? 50);
const emu = await startEmulator({ nodes: 4, gpus: 8, warnUnsupported: false });
const kc = new k8s.KubeConfig();
kc.loadFromFile(emu.kubeconfigPath);
const core = kc.makeApiClient(k8s.CoreV1Api);
const ns = 'default';
const labels = { bench: 'k8semu' };
const phases = new Map<string, string>();
const watch = await new k8s.Watch(kc).watch(
  `/api/v1/namespaces/${ns}/pods`,
  { labelSelector: 'bench=k8semu' },
  (type, p: k8s.V1Pod) =>
    type === 'DELETED'
      ? phases.delete(p.metadata!.name!)
      : phases.set(p.metadata!.name!, p.status?.phase ?? ''),
  () => undefined,
);
const until = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + 300_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

await core.createNamespacedConfigMap({
  namespace: ns,
  body: { metadata: { name: 'script', labels }, data: { 'run.sh': 'echo "task $TOKEN_LEN"; sleep 2\n' } },
});
await core.createNamespacedSecret({
  namespace: ns,
  body: { metadata: { name: 'env', labels }, stringData: { TOKEN: 'x'.repeat(32) } },
});
const t0 = performance.now();
await Promise.all(
  Array.from({ length: PODS }, (_, i) =>
    core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: `task-${i}`, labels },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'bash:5',
              command: ['sh', '/sflow/run.sh'],
              envFrom: [{ secretRef: { name: 'env' } }],
              resources: { limits: { 'nvidia.com/gpu': '0' } },
              volumeMounts: [{ name: 'script', mountPath: '/sflow' }],
            },
          ],
          volumes: [{ name: 'script', configMap: { name: 'script' } }],
        },
      },
    }),
  ),
);
const created = performance.now();
await until(
  'all running',
  () => [...phases.values()].filter((p) => p === 'Running' || p === 'Succeeded').length === PODS,
);
const running = performance.now();
await until('all succeeded', () => [...phases.values()].filter((p) => p === 'Succeeded').length === PODS);
const succeeded = performance.now();
await core.deleteCollectionNamespacedPod({ namespace: ns, labelSelector: 'bench=k8semu' });
await until('all gone', () => phases.size === 0);
const gone = performance.now();
watch.abort();
const requests = emu.requests().length;
await emu.stop();
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `${PODS} pods: created ${s(created - t0)}, all Running ${s(running - t0)}, all Succeeded ${s(succeeded - t0)} (each sleeps 2 s), deleted ${s(gone - succeeded)}; ${requests} API requests`,
);
