/**
 * Pods of the emulator really run: real exit codes and phases, graceful deletion (TERM, grace,
 * KILL → 137), restarts, multi-container and init-container pods, waiting for a missing
 * ConfigMap. Files, env and Secrets: pod-files.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  emulatorMounts,
  finished,
  podGone,
  required,
  sandboxMissing,
  shPod,
  startK8s,
  waitFor,
  type K8s,
} from './harness.js';

const missing = sandboxMissing();
const NS = 'default';
const log = (k: K8s, name: string, container?: string) =>
  k.core.readNamespacedPodLog({ namespace: NS, name, container });

describe.skipIf(missing !== undefined && !required)(
  `pods run as local processes${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s;
    let dir: string;
    beforeAll(async () => {
      if (missing) throw new Error(missing);
      dir = mkdtempSync(join(tmpdir(), 'k8semu-pods-'));
      k = await startK8s({ nodes: 2, gpus: 4 });
    });
    afterAll(async () => {
      await k?.emu.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
      expect(emulatorMounts()).toEqual([]);
    });

    test('exit codes and phases are the process’s own', async () => {
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('ok', 'echo fine') });
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('bad', 'echo no >&2; exit 3') });
      const ok = await finished(k.core, 'ok');
      const bad = await finished(k.core, 'bad');
      expect(ok.status!.phase).toBe('Succeeded');
      expect(ok.status!.containerStatuses![0].state!.terminated).toMatchObject({
        exitCode: 0,
        reason: 'Completed',
      });
      expect(bad.status!.phase).toBe('Failed');
      expect(bad.status!.containerStatuses![0].state!.terminated).toMatchObject({
        exitCode: 3,
        reason: 'Error',
      });
      expect(await log(k, 'bad')).toBe('no\n');
      expect(bad.status!.podIP).toBe(bad.status!.hostIP);
      expect(['127.10.0.1', '127.10.0.2']).toContain(bad.status!.hostIP);
    });

    test('delete: TERM first (a handler runs), KILL after the grace period (exit 137), then the object goes', async () => {
      const trapped = join(dir, 'trapped');
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('polite', `trap 'echo term > ${trapped}; exit 0' TERM; while :; do sleep 0.05; done`),
      });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('stubborn', 'while :; do sleep 0.05; done', { terminationGracePeriodSeconds: 1 }),
      });
      for (const n of ['polite', 'stubborn'])
        await waitFor(
          `${n} running`,
          async () =>
            (await k.core.readNamespacedPod({ namespace: NS, name: n })).status?.phase === 'Running' ||
            undefined,
        );
      const last: Record<string, k8s.V1Pod> = {};
      const w = await new k8s.Watch(k.kc).watch(
        `/api/v1/namespaces/${NS}/pods`,
        {},
        (_t, o: k8s.V1Pod) => (last[o.metadata!.name!] = o),
        () => undefined,
      );
      const del = await k.core.deleteNamespacedPod({ namespace: NS, name: 'stubborn' });
      expect(del.metadata!.deletionTimestamp).toBeDefined();
      expect(del.metadata!.deletionGracePeriodSeconds).toBe(1);
      await k.core.deleteNamespacedPod({ namespace: NS, name: 'polite' });
      await waitFor(
        'both gone',
        async () => ((await podGone(k.core, 'polite')) && (await podGone(k.core, 'stubborn'))) || undefined,
      );
      w.abort();
      expect(readFileSync(trapped, 'utf8')).toBe('term\n');
      expect(last.polite.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(0);
      expect(last.stubborn.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(137);
    });

    test('restartPolicy OnFailure restarts a failed container; previous log kept', async () => {
      const count = join(dir, 'count');
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('flaky', `echo run >> ${count}; n=$(wc -l < ${count}); echo attempt $n; [ $n -ge 2 ]`, {
          restartPolicy: 'OnFailure',
        }),
      });
      const pod = await finished(k.core, 'flaky');
      expect(pod.status!.phase).toBe('Succeeded');
      expect(pod.status!.containerStatuses![0].restartCount).toBe(1);
      expect(pod.status!.containerStatuses![0].lastState!.terminated!.exitCode).toBe(1);
      expect(await log(k, 'flaky')).toBe('attempt 2\n');
      expect(await k.core.readNamespacedPodLog({ namespace: NS, name: 'flaky', previous: true })).toBe(
        'attempt 1\n',
      );
    });

    test('two containers run side by side with their own logs; a failing init container fails the pod', async () => {
      await k.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'pair' },
          spec: {
            restartPolicy: 'Never',
            containers: [
              { name: 'a', image: 'x', command: ['sh', '-c', 'echo from a'] },
              { name: 'b', image: 'x', command: ['sh', '-c', 'echo from b; exit 4'] },
            ],
          },
        },
      });
      const pair = await finished(k.core, 'pair');
      expect(pair.status!.phase).toBe('Failed');
      expect(pair.status!.containerStatuses!.map((c) => c.state!.terminated!.exitCode)).toEqual([0, 4]);
      expect(await log(k, 'pair', 'a')).toBe('from a\n');
      expect(await log(k, 'pair', 'b')).toBe('from b\n');
      await expect(log(k, 'pair')).rejects.toMatchObject({
        code: 400,
        body: expect.stringContaining('a container name must be specified'),
      });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'noinit' },
          spec: {
            restartPolicy: 'Never',
            initContainers: [{ name: 'setup', image: 'x', command: ['sh', '-c', 'exit 2'] }],
            containers: [{ name: 'main', image: 'x', command: ['sh', '-c', `touch ${dir}/main-ran`] }],
          },
        },
      });
      const noinit = await finished(k.core, 'noinit');
      expect(noinit.status!.phase).toBe('Failed');
      expect(noinit.status!.initContainerStatuses![0].state!.terminated!.exitCode).toBe(2);
      expect(existsSync(join(dir, 'main-ran'))).toBe(false);
    });

    test('a pod whose ConfigMap is missing waits in ContainerCreating and starts once it exists', async () => {
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('later', '', {
          volumes: [{ name: 'c', configMap: { name: 'late' } }],
          containers: [
            {
              name: 'main',
              image: 'x',
              command: ['cat', '/cfg/x'],
              volumeMounts: [{ name: 'c', mountPath: '/cfg' }],
            },
          ],
        }),
      });
      const waiting = await waitFor('ContainerCreating', async () => {
        const p = await k.core.readNamespacedPod({ namespace: NS, name: 'later' });
        return p.status?.containerStatuses?.[0]?.state?.waiting?.message ? p : undefined;
      });
      expect(waiting.status!.phase).toBe('Pending');
      expect(waiting.status!.containerStatuses![0].state!.waiting).toMatchObject({
        reason: 'ContainerCreating',
        message: expect.stringContaining('configmap "late" not found'),
      });
      await expect(log(k, 'later')).rejects.toMatchObject({
        code: 400,
        body: expect.stringContaining('is waiting to start'),
      });
      await k.core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'late' }, data: { x: 'now' } },
      });
      expect((await finished(k.core, 'later')).status!.phase).toBe('Succeeded');
      expect(await log(k, 'later')).toBe('now');
    });
  },
);

describe('without private namespaces (the fallback where unshare cannot be used)', () => {
  test('a pod without volume mounts runs in a process group; one with mounts fails saying why', async () => {
    process.env.K8SEMU_NO_NAMESPACES = '1';
    const k = await startK8s({ nodes: 1 });
    try {
      await k.core.createNamespacedPod({ namespace: NS, body: shPod('plain', 'echo "$HOSTNAME"; exit 2') });
      const plain = await finished(k.core, 'plain');
      expect(plain.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(2);
      expect(await log(k, 'plain')).toBe('plain\n');
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('mounted', '', {
          volumes: [{ name: 'v', emptyDir: {} }],
          containers: [
            { name: 'main', image: 'x', command: ['true'], volumeMounts: [{ name: 'v', mountPath: '/v' }] },
          ],
        }),
      });
      const mounted = await finished(k.core, 'mounted');
      expect(mounted.status).toMatchObject({ phase: 'Failed', reason: 'StartError' });
      expect(mounted.status!.message).toMatch(/volume mounts need private mount namespaces/);
    } finally {
      delete process.env.K8SEMU_NO_NAMESPACES;
      await k.emu.stop();
    }
  });
});
