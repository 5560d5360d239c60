/**
 * The official @kubernetes/client-node (sflow's Kubernetes client) against the emulator:
 * listing, watching (events in order, resuming from a resourceVersion), a followed log that
 * streams while the pod runs, ConfigMaps/Secrets, delete-collection by label, access reviews,
 * and the MPIJob CRD / DRA discovery.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  followLog,
  processesWith,
  required,
  sandboxMissing,
  shPod,
  startK8s,
  waitFor,
  type K8s,
} from './harness.js';

const missing = sandboxMissing();
const NS = 'default';

describe.skipIf(missing !== undefined && !required)(
  `client-node against the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s;
    let dir: string;
    beforeAll(async () => {
      if (missing) throw new Error(missing);
      dir = mkdtempSync(join(tmpdir(), 'k8semu-cn-'));
      k = await startK8s({ nodes: 2, gpus: 4 });
    });
    afterAll(async () => {
      await k?.emu.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('lists nodes with addresses, labels and GPU allocatable', async () => {
      const nodes = await k.core.listNode();
      expect(nodes.items.map((n) => n.metadata!.name)).toEqual(['node-0', 'node-1']);
      const n1 = nodes.items[1];
      expect(n1.metadata!.labels!['kubernetes.io/hostname']).toBe('node-1');
      expect(n1.status!.allocatable!['nvidia.com/gpu']).toBe('4');
      expect(n1.status!.addresses).toContainEqual({ type: 'InternalIP', address: '127.10.0.2' });
      expect(n1.metadata!.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number(n1.metadata!.resourceVersion)).toBeGreaterThan(0);
      expect(n1.metadata!.creationTimestamp).toBeInstanceOf(Date);
    });

    test('watch delivers a pod’s life in order and resumes from a resourceVersion', async () => {
      const start = await k.core.listNamespacedPod({ namespace: NS, labelSelector: 'w=1' });
      const events: { type: string; phase?: string; rv: number }[] = [];
      const watch = await new k8s.Watch(k.kc).watch(
        `/api/v1/namespaces/${NS}/pods`,
        { labelSelector: 'w=1', resourceVersion: start.metadata!.resourceVersion },
        (type, obj: k8s.V1Pod) =>
          events.push({ type, phase: obj.status?.phase, rv: Number(obj.metadata!.resourceVersion) }),
        () => undefined,
      );
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('watched', 'echo hi', {}, { w: '1' }) });
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('unrelated', 'echo hi') });
      await waitFor('Succeeded event', () => events.some((e) => e.phase === 'Succeeded') || undefined);
      await k.core.deleteNamespacedPod({ namespace: NS, name: 'watched' });
      await waitFor('DELETED event', () => events.some((e) => e.type === 'DELETED') || undefined);
      watch.abort();
      const types = events.map((e) => e.type);
      expect(types[0]).toBe('ADDED');
      expect(types.at(-1)).toBe('DELETED');
      expect(types.slice(1, -1).every((t) => t === 'MODIFIED')).toBe(true);
      const phases = events.map((e) => e.phase);
      expect(phases.indexOf('Running')).toBeGreaterThan(0);
      expect(phases.indexOf('Succeeded')).toBeGreaterThan(phases.indexOf('Running'));
      expect(events.map((e) => e.rv)).toEqual([...events.map((e) => e.rv)].sort((a, b) => a - b));
      // a watch resumed from the middle replays exactly the later events
      const mid = events[2].rv;
      const replay: string[] = [];
      const again = await new k8s.Watch(k.kc).watch(
        `/api/v1/namespaces/${NS}/pods`,
        { labelSelector: 'w=1', resourceVersion: String(mid) },
        (type, obj: k8s.V1Pod) => replay.push(`${type}:${obj.metadata!.resourceVersion}`),
        () => undefined,
      );
      await waitFor('replayed events', () => replay.length === events.length - 3 || undefined);
      again.abort();
      expect(replay).toEqual(events.slice(3).map((e) => `${e.type}:${e.rv}`));
    });

    test('a followed log streams while the pod runs and ends with it', async () => {
      const flag = join(dir, 'go');
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('streamer', `echo ready; while [ ! -e ${flag} ]; do sleep 0.05; done; printf 'done\\n'`),
      });
      await waitFor(
        'streamer running',
        async () =>
          (await k.core.readNamespacedPod({ namespace: NS, name: 'streamer' })).status?.phase === 'Running' ||
          undefined,
      );
      let seen = '';
      const all = followLog(k.kc, 'streamer', (c) => {
        seen += c;
        if (seen.includes('ready\n')) writeFileSync(flag, ''); // only after the first line arrived
      });
      expect(await all).toBe('ready\ndone\n');
      const pod = await k.core.readNamespacedPod({ namespace: NS, name: 'streamer' });
      expect(pod.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(0);
      const ts = await k.core.readNamespacedPodLog({
        namespace: NS,
        name: 'streamer',
        timestamps: true,
        tailLines: 1,
      });
      expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z done\n$/);
      const raw = async (query: string) =>
        (await fetch(`${k.emu.url}/api/v1/namespaces/${NS}/pods/streamer/log?${query}`)).text();
      expect(await raw('limitBytes=3')).toBe('rea');
      expect(await raw(`sinceTime=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toBe(
        '',
      );
      expect(await raw('sinceSeconds=600')).toBe('ready\ndone\n');
    });

    test('ConfigMaps and Secrets round-trip; delete-collection by label removes pods (processes too), ConfigMaps and Secrets', async () => {
      const labels = { 'sflow/run': 'r42' };
      await k.core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'script', labels }, data: { 'run.sh': 'echo x' } },
      });
      await k.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'env', labels }, stringData: { TOKEN: 'tok-123' } },
      });
      const s = await k.core.readNamespacedSecret({ namespace: NS, name: 'env' });
      expect(Buffer.from(s.data!.TOKEN, 'base64').toString()).toBe('tok-123');
      expect(s.type).toBe('Opaque');
      const marker = `dc-mark-${process.pid}`;
      for (const i of [0, 1, 2])
        await k.core.createNamespacedPod({
          namespace: NS,
          body: shPod(
            `held-${i}`,
            `while :; do sleep 0.05; done # ${marker}`,
            { terminationGracePeriodSeconds: 1 },
            labels,
          ),
        });
      await waitFor('three running', async () => {
        const l = await k.core.listNamespacedPod({ namespace: NS, labelSelector: 'sflow/run=r42' });
        return l.items.filter((p) => p.status?.phase === 'Running').length === 3 || undefined;
      });
      expect(processesWith(marker).length).toBeGreaterThanOrEqual(3);
      await k.core.deleteCollectionNamespacedPod({ namespace: NS, labelSelector: 'sflow/run=r42' });
      await k.core.deleteCollectionNamespacedConfigMap({ namespace: NS, labelSelector: 'sflow/run=r42' });
      await k.core.deleteCollectionNamespacedSecret({ namespace: NS, labelSelector: 'sflow/run=r42' });
      await waitFor(
        'pods gone',
        async () =>
          (await k.core.listNamespacedPod({ namespace: NS, labelSelector: 'sflow/run=r42' })).items.length ===
            0 || undefined,
      );
      expect(processesWith(marker)).toEqual([]);
      expect(
        (await k.core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'sflow/run=r42' })).items,
      ).toEqual([]);
      expect(
        (await k.core.listNamespacedSecret({ namespace: NS, labelSelector: 'sflow/run=r42' })).items,
      ).toEqual([]);
    });

    test('Exec: a command in a running container, its output and final Status', async () => {
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('execd', 'while :; do sleep 0.05; done', { terminationGracePeriodSeconds: 0 }),
      });
      await waitFor(
        'execd running',
        async () =>
          (await k.core.readNamespacedPod({ namespace: NS, name: 'execd' })).status?.phase === 'Running' ||
          undefined,
      );
      const { PassThrough } = await import('node:stream');
      const run = async (command: string[]) => {
        const out = new PassThrough();
        let text = '';
        out.on('data', (d: Buffer) => (text += d.toString()));
        const status = await new Promise<k8s.V1Status>((resolve) => {
          void new k8s.Exec(k.kc).exec(NS, 'execd', 'main', command, out, null, null, false, (s) =>
            resolve(s),
          );
        });
        return { text, status };
      };
      const ok = await run(['sh', '-c', 'echo "$HOSTNAME in $(pwd)"']);
      expect(ok.status.status).toBe('Success');
      expect(ok.text).toBe('execd in /\n');
      const bad = await run(['sh', '-c', 'exit 3']);
      expect(bad.status).toMatchObject({
        status: 'Failure',
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: '3' }] },
      });
      await k.core.deleteNamespacedPod({ namespace: NS, name: 'execd' });
    });

    test('ResourceQuotas and DaemonSets are stored and listed (what hand-off and RDMA detection read)', async () => {
      await k.core.createNamespacedResourceQuota({
        namespace: NS,
        body: { metadata: { name: 'gpu-quota' }, spec: { hard: { 'requests.nvidia.com/gpu': '8' } } },
      });
      const quotas = await k.core.listNamespacedResourceQuota({ namespace: NS });
      expect(quotas.items.map((q) => q.spec!.hard!['requests.nvidia.com/gpu'])).toEqual(['8']);
      const apps = k.kc.makeApiClient(k8s.AppsV1Api);
      expect((await apps.listNamespacedDaemonSet({ namespace: 'kube-system' })).items).toEqual([]);
      await k.core.deleteNamespacedResourceQuota({ namespace: NS, name: 'gpu-quota' });
    });

    test('SelfSubjectAccessReview: allowed unless configured otherwise', async () => {
      const authz = k.kc.makeApiClient(k8s.AuthorizationV1Api);
      const ask = (verb: string, resource: string, subresource?: string) =>
        authz.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { namespace: NS, verb, resource, subresource } } },
        });
      expect((await ask('create', 'pods')).status!.allowed).toBe(true);
      k.emu.deny.add('get pods/log');
      try {
        expect((await ask('get', 'pods', 'log')).status!.allowed).toBe(false);
        expect((await ask('get', 'pods')).status!.allowed).toBe(true);
      } finally {
        k.emu.deny.delete('get pods/log');
      }
    });
  },
);

describe.skipIf(missing !== undefined && !required)('discovery of optional APIs', () => {
  test('kubeflow.org MPIJob CRD and resource.k8s.io appear only when enabled', async () => {
    const plain = await startK8s({ nodes: 1 });
    const full = await startK8s({ nodes: 2, gpus: 8, mpiJob: true, dra: true });
    try {
      const groups = async (x: K8s) =>
        (await x.kc.makeApiClient(k8s.ApisApi).getAPIVersions()).groups.map((g) => g.name);
      expect(await groups(plain)).not.toContain('kubeflow.org');
      expect(await groups(plain)).not.toContain('resource.k8s.io');
      expect(await groups(full)).toEqual(
        expect.arrayContaining(['kubeflow.org', 'resource.k8s.io', 'authorization.k8s.io']),
      );
      const crd = await full.kc
        .makeApiClient(k8s.ApiextensionsV1Api)
        .readCustomResourceDefinition({ name: 'mpijobs.kubeflow.org' });
      expect(crd.spec.versions.map((v) => v.name)).toEqual(['v2beta1']);
      const custom = full.kc.makeApiClient(k8s.CustomObjectsApi);
      const job = {
        apiVersion: 'kubeflow.org/v2beta1',
        kind: 'MPIJob',
        metadata: { name: 'mpi', labels: { a: 'b' } },
        spec: { slotsPerWorker: 8 },
      };
      await custom.createNamespacedCustomObject({
        group: 'kubeflow.org',
        version: 'v2beta1',
        namespace: NS,
        plural: 'mpijobs',
        body: job,
      });
      const jobs = await custom.listNamespacedCustomObject({
        group: 'kubeflow.org',
        version: 'v2beta1',
        namespace: NS,
        plural: 'mpijobs',
        labelSelector: 'a=b',
      });
      expect(jobs.items.map((j: k8s.KubernetesObject) => j.metadata!.name)).toEqual(['mpi']);
      const dra = full.kc.makeApiClient(k8s.ResourceV1Api);
      await dra.createNamespacedResourceClaimTemplate({
        namespace: NS,
        body: {
          metadata: { name: 'gpus-2' },
          spec: {
            spec: {
              devices: {
                requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', count: 2 } }],
              },
            },
          },
        },
      });
      const tpl = await dra.listNamespacedResourceClaimTemplate({ namespace: NS });
      expect(tpl.items.map((t) => t.metadata!.name)).toEqual(['gpus-2']);
      const slices = await dra.listResourceSlice();
      expect(slices.items.map((s) => [s.spec.nodeName, s.spec.devices!.length])).toEqual([
        ['node-0', 8],
        ['node-1', 8],
      ]);
      await expect(
        plain.kc
          .makeApiClient(k8s.ApiextensionsV1Api)
          .readCustomResourceDefinition({ name: 'mpijobs.kubeflow.org' }),
      ).rejects.toMatchObject({ code: 404 });
    } finally {
      await plain.emu.stop();
      await full.emu.stop();
    }
  });
});
