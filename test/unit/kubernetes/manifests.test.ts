/**
 * The objects an attempt creates on Kubernetes, field by field, for three of the original tool's
 * recipes (plus one variant with DRA claims, host RDMA and a compute-domain channel): each task's
 * pods, script ConfigMap and env Secret, built without a cluster (prepareTaskPods) and compared
 * with test/fixtures/k8s-manifests/<case>.json. `SFLOW_UPDATE_GOLDEN=1` rewrites them (review the
 * diff). A few facts the spec names are also asserted directly.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { RdmaFound } from '../../../src/backends/kubernetes/dra.js';
import { runNames } from '../../../src/backends/kubernetes/names.js';
import { k8sSettings } from '../../../src/backends/kubernetes/settings.js';
import { prepareTaskPods } from '../../../src/backends/kubernetes/task-pods.js';
import type { Plan } from '../../../src/plan/types.js';
import { describeWithShared } from '../../helpers/shared.js';
import { backendOfType, operatorOfType } from '../../helpers/backends.js';
import { compatPlan, RUN_ID } from './compat-plan.js';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'k8s-manifests');
const UPDATE = process.env.SFLOW_UPDATE_GOLDEN === '1';

function manifests(plan: Plan, rdma: RdmaFound = { hcas: [], gkeNetworks: [] }) {
  const b = backendOfType(plan.backends[0], 'kubernetes');
  const settings = k8sSettings(b);
  const run = runNames(RUN_ID);
  const r = { settings, run, backend: b.name, api: { namespace: settings.namespace }, log: () => undefined };
  const manifest = {
    settings,
    run,
    backend: b.name,
    namespace: settings.namespace,
    driver: 'driver-host:1:0',
  };
  const channel = settings.computeDomain.channel;
  return Object.fromEntries(
    plan.tasks
      .filter((t) => !t.colocated)
      .map((t) => {
        const p = prepareTaskPods(
          {
            r,
            manifest,
            rdma,
            channel: channel && channel !== 'auto' ? channel : undefined,
          },
          { task: t, attempt: 1, specs: t.launch },
          undefined,
        );
        return [t.name, p];
      }),
  );
}

function golden(name: string, got: unknown) {
  const file = join(GOLDEN, `${name}.json`);
  const text = `${JSON.stringify(got, null, 2)}\n`;
  if (UPDATE) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(file, text);
  }
  expect(existsSync(file), `${file} (SFLOW_UPDATE_GOLDEN=1 records it)`).toBe(true);
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}

describeWithShared('compat', 'Kubernetes pod manifests of compat recipes (golden)', () => {
  it('kubernetes_hello_world: one pod, script from a ConfigMap, env from a Secret, pinned, Never', () => {
    const m = manifests(compatPlan(['src/sflow/samples/kubernetes_hello_world.yaml']));
    golden('kubernetes_hello_world', m);
    const pod = m.hello.pods[0];
    expect(pod.spec!.restartPolicy).toBe('Never');
    expect(pod.spec!.nodeSelector).toMatchObject({ 'kubernetes.io/hostname': 'k8s-node0' });
    expect(pod.spec!.containers[0].image).toBe('ubuntu:22.04');
    expect(pod.spec!.containers[0].envFrom).toEqual([
      { secretRef: { name: m.hello.secret!.metadata!.name } },
    ]);
    expect(m.hello.configMap.data!['task.sh']).toContain('echo "Hello from Kubernetes"');
    // the env values live in the Secret only
    expect(JSON.stringify(pod)).not.toContain(m.hello.secret!.stringData!.SFLOW_TASK_OUTPUT_DIR);
  });

  it('output collect: off with collect_node_local_output: false; the operator size cap wins', () => {
    const off = compatPlan(['src/sflow/samples/kubernetes_hello_world.yaml']);
    backendOfType(off.backends[0], 'kubernetes').config.collect_node_local_output = false;
    const m = manifests(off);
    expect(m.hello.collect).toBe(false);
    expect(m.hello.configMap.data!['task.sh']).not.toContain('__sflow_collect');
    const capped = compatPlan(['src/sflow/samples/kubernetes_hello_world.yaml']);
    operatorOfType(capped.tasks[0].operator, 'k8s').config.collect_max_file_size = 1024;
    expect(manifests(capped).hello.configMap.data!['task.sh']).toContain('-size +1024c');
  });

  it('kubernetes_multinode: 4 pods, one per node, 8 device-plugin GPUs each, per-pod node index', () => {
    const m = manifests(compatPlan(['examples/kubernetes_multinode.yaml']));
    golden('kubernetes_multinode', m);
    const pods = m.distributed_train.pods;
    expect(pods.map((p) => p.spec!.nodeSelector!['kubernetes.io/hostname'])).toEqual([
      'k8s-node0',
      'k8s-node1',
      'k8s-node2',
      'k8s-node3',
    ]);
    for (const [i, p] of pods.entries()) {
      expect(p.spec!.containers[0].resources!.limits).toMatchObject({ 'nvidia.com/gpu': '8' });
      expect(p.spec!.containers[0].env).toContainEqual({ name: 'SFLOW_TASK_NODE_INDEX', value: String(i) });
      // the node's name comes from the API (the node the pod really runs on), not from the plan
      expect(p.spec!.containers[0].env).toContainEqual({
        name: 'SFLOW_TASK_NODE_NAME',
        valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } },
      });
    }
  });

  it('kubernetes_pd_smoke: three single-node pods pinned to nodes 0, 1, 2', () => {
    const m = manifests(compatPlan(['examples/kubernetes_pd_smoke.yaml']));
    golden('kubernetes_pd_smoke', m);
    expect(
      ['prefill_leader', 'prefill_worker', 'decode_client'].map(
        (t) => m[t].pods[0].spec!.nodeSelector!['kubernetes.io/hostname'],
      ),
    ).toEqual(['k8s-node0', 'k8s-node1', 'k8s-node2']);
  });

  it('kubernetes_multinode with scheduling: dra, host RDMA and a compute-domain channel (experimental)', () => {
    const plan = compatPlan(['examples/kubernetes_multinode.yaml']);
    Object.assign(plan.backends[0].config, {
      scheduling: 'dra',
      rdma: 'host_device',
      compute_domain: { channel: 'imex-channel-0' },
    });
    const m = manifests(plan, { hcas: ['mlx5_0', 'mlx5_1'], gkeNetworks: [] });
    golden('kubernetes_multinode-dra-rdma', m);
    const t = m.distributed_train;
    expect(t.claims).toHaveLength(4);
    expect(JSON.stringify(t.claims[0])).toContain('gpu.nvidia.com');
    expect(JSON.stringify(t.pods[0].spec!.resourceClaims)).toContain('imex-channel-0');
    expect(t.pods[0].spec!.containers[0].resources!.claims).toEqual([
      { name: 'gpus' },
      { name: 'cd-channel' },
    ]);
    expect(t.pods[0].spec!.volumes!.map((v) => v.name)).toContain('infiniband');
  });
});
