/**
 * The emulator's scheduler (hostname pinning, GPU fit against allocatable, reservation hand-off,
 * node affinity, taints, `nodeName` admission) and its API errors: Status objects with the right
 * HTTP codes, and unsupported requests logged as such.
 */
import * as k8s from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { finished, podGone, required, sandboxMissing, shPod, waitFor } from './harness.js';
import { withEmulator } from './with-emulator.js';

const missing = sandboxMissing();
const NS = 'default';
const gpus = (n: number): k8s.V1ResourceRequirements => ({ limits: { 'nvidia.com/gpu': String(n) } });
const sleeper = (name: string, extra: Partial<k8s.V1PodSpec> = {}, n = 0): k8s.V1Pod =>
  shPod(name, 'while :; do sleep 0.1; done', {
    terminationGracePeriodSeconds: 0,
    containers: [
      {
        name: 'main',
        image: 'bash:5',
        command: ['sh', '-c', 'while :; do sleep 0.1; done'],
        ...(n ? { resources: gpus(n) } : {}),
      },
    ],
    ...extra,
  });

describe.skipIf(missing !== undefined && !required)(
  `scheduling and API errors${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const k = withEmulator(missing, {
      nodes: [
        { name: 'gpu-a', gpus: 4 },
        { name: 'gpu-b', gpus: 4 },
        { name: 'tainted', gpus: 8, taints: [{ key: 'dedicated', value: 'infer', effect: 'NoSchedule' }] },
      ],
    });
    const read = (name: string) => k.core.readNamespacedPod({ namespace: NS, name });
    const scheduledOn = (name: string) =>
      waitFor(`${name} scheduled`, async () => (await read(name)).spec?.nodeName);

    test('a hostname nodeSelector pins the pod; podIP is that node’s address', async () => {
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('pinned', 'echo hi', { nodeSelector: { 'kubernetes.io/hostname': 'gpu-b' } }),
      });
      expect(await scheduledOn('pinned')).toBe('gpu-b');
      const onB = await k.core.listNamespacedPod({
        namespace: NS,
        fieldSelector: 'spec.nodeName=gpu-b,metadata.name!=other',
      });
      expect(onB.items.map((p) => p.metadata!.name)).toEqual(['pinned']);
      expect(
        (await k.core.listNamespacedPod({ namespace: NS, fieldSelector: 'spec.nodeName=gpu-a' })).items,
      ).toEqual([]);
      expect((await finished(k.core, 'pinned')).status!.podIP).toBe('127.10.0.2');
    });

    test('placeholders hold whole nodes; an extra GPU pod is Unschedulable until one is deleted (hand-off)', async () => {
      for (const n of ['gpu-a', 'gpu-b'])
        await k.core.createNamespacedPod({
          namespace: NS,
          body: sleeper(`hold-${n}`, { nodeSelector: { 'kubernetes.io/hostname': n } }, 4),
        });
      expect(await scheduledOn('hold-gpu-a')).toBe('gpu-a');
      expect(await scheduledOn('hold-gpu-b')).toBe('gpu-b');
      await k.core.createNamespacedPod({ namespace: NS, body: sleeper('task', {}, 2) });
      const cond = await waitFor('Unschedulable', async () =>
        (await read('task')).status?.conditions?.find(
          (c) => c.type === 'PodScheduled' && c.status === 'False',
        ),
      );
      expect(cond.reason).toBe('Unschedulable');
      expect(cond.message).toMatch(
        /^0\/3 nodes are available: 2 Insufficient nvidia\.com\/gpu, 1 node\(s\) had untolerated taint \{dedicated: infer\}/,
      );
      expect((await read('task')).status!.phase).toBe('Pending');
      await k.core.deleteNamespacedPod({ namespace: NS, name: 'hold-gpu-a' });
      expect(await scheduledOn('task')).toBe('gpu-a');
      await waitFor(
        'task running',
        async () => (await read('task')).status?.phase === 'Running' || undefined,
      );
      for (const n of ['task', 'hold-gpu-b']) await k.core.deleteNamespacedPod({ namespace: NS, name: n });
      await waitFor(
        'cleanup',
        async () => ((await podGone(k.core, 'task')) && (await podGone(k.core, 'hold-gpu-b'))) || undefined,
      );
    });

    test('unpinned GPU pods spread over the nodes with room; a toleration opens the tainted node', async () => {
      await k.core.createNamespacedPod({ namespace: NS, body: sleeper('four-a', {}, 4) });
      await k.core.createNamespacedPod({ namespace: NS, body: sleeper('four-b', {}, 4) });
      expect(new Set([await scheduledOn('four-a'), await scheduledOn('four-b')])).toEqual(
        new Set(['gpu-a', 'gpu-b']),
      );
      const tol = {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infer', effect: 'NoSchedule' }],
      };
      await k.core.createNamespacedPod({ namespace: NS, body: sleeper('eight', tol, 8) });
      expect(await scheduledOn('eight')).toBe('tainted');
      await k.core.deleteCollectionNamespacedPod({ namespace: NS });
      await waitFor(
        'all gone',
        async () => (await k.core.listNamespacedPod({ namespace: NS })).items.length === 0 || undefined,
      );
    });

    test('required node affinity NotIn (exclude_nodes) and nodeName admission', async () => {
      const affinity: k8s.V1Affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['gpu-a'] }] },
            ],
          },
        },
      };
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('not-a', 'true', { affinity }) });
      expect(await scheduledOn('not-a')).toBe('gpu-b');
      await k.core.createNamespacedPod({ namespace: NS, body: sleeper('direct', { nodeName: 'gpu-a' }, 4) });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: sleeper('too-many', { nodeName: 'gpu-a' }, 1),
      });
      const rejected = await finished(k.core, 'too-many');
      expect(rejected.status).toMatchObject({ phase: 'Failed', reason: 'OutOfnvidia.com/gpu' });
      await waitFor(
        'direct running',
        async () => (await read('direct')).status?.phase === 'Running' || undefined,
      );
      await k.core.deleteCollectionNamespacedPod({ namespace: NS });
    });

    test('errors are Status objects with the real codes; unsupported requests are logged', async () => {
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(k.emu.url + path, {
          method,
          headers: { 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as Record<string, any> };
      };
      const nf = await call('GET', '/api/v1/namespaces/default/pods/nope');
      expect(nf).toMatchObject({
        status: 404,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
          message: 'pods "nope" not found',
        },
      });
      const pod = {
        metadata: { name: 'dup' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', command: ['true'] }] },
      };
      expect((await call('POST', '/api/v1/namespaces/default/pods', pod)).status).toBe(201);
      expect((await call('POST', '/api/v1/namespaces/default/pods', pod)).body).toMatchObject({
        reason: 'AlreadyExists',
        code: 409,
      });
      const invalid = await call('POST', '/api/v1/namespaces/default/pods', {
        metadata: { name: 'Bad_Name' },
        spec: { containers: [{ name: 'c' }] },
      });
      expect(invalid.body).toMatchObject({
        reason: 'Invalid',
        code: 422,
        details: { kind: 'Pod', name: 'Bad_Name' },
      });
      expect(invalid.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
        'metadata.name',
        'spec.containers[0].image',
      ]);
      expect(
        (await call('POST', '/api/v1/namespaces/missing/configmaps', { metadata: { name: 'x' } })).body,
      ).toMatchObject({ reason: 'NotFound', code: 404 });
      k.emu.deny.add('create configmaps');
      try {
        expect(
          (await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } })).body,
        ).toMatchObject({ reason: 'Forbidden', code: 403 });
      } finally {
        k.emu.deny.delete('create configmaps');
      }
      expect((await call('POST', '/api/v1/nodes', { metadata: { name: 'n' } })).body).toMatchObject({
        reason: 'MethodNotAllowed',
        code: 405,
      });
      expect((await call('GET', '/apis/example.com/v1/widgets')).body).toMatchObject({
        reason: 'NotFound',
        code: 404,
      });
      // exec needs a WebSocket upgrade: a plain request gets the real server's answer
      expect((await call('GET', '/api/v1/namespaces/default/pods/dup/exec')).body).toMatchObject({
        code: 400,
        message: 'Upgrade request required',
      });
      expect(k.emu.unsupported().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
        'POST /api/v1/nodes 405',
        'GET /apis/example.com/v1/widgets 404',
      ]);
      const logged = k.emu
        .requests()
        .findLast(
          (r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/pods' && r.status === 201,
        );
      expect(logged).toMatchObject({ query: {}, body: { metadata: { name: 'dup' } } });
    });
  },
);
