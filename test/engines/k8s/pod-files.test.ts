/**
 * What a pod's processes see: volumes at their mount paths (ConfigMap `subPath`/`items`/
 * `defaultMode`, Secret, an `emptyDir` shared by an init container and the main one, read-only
 * mounts) with nothing created on the host, the env (`envFrom`, `valueFrom`, `$(VAR)`), the
 * hostname, and Secret values that reach the process but never argv or the request log.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  emulatorMounts,
  finished,
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
const log = (k: K8s, name: string, container?: string) =>
  k.core.readNamespacedPodLog({ namespace: NS, name, container });

describe.skipIf(missing !== undefined && !required)(
  `pod files, env and secrets${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s;
    let dir: string;
    beforeAll(async () => {
      if (missing) throw new Error(missing);
      dir = mkdtempSync(join(tmpdir(), 'k8semu-files-'));
      writeFileSync(join(dir, 'tool'), '#!/bin/sh\necho "the image\'s tool"\n', { mode: 0o755 });
      k = await startK8s({
        nodes: 2,
        gpus: 4,
        images: { 'emulated:1': { mounts: [{ src: dir, dst: '/opt/emulated' }], privateTmp: true } },
      });
    });
    afterAll(async () => {
      await k?.emu.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
      expect(emulatorMounts()).toEqual([]);
    });

    test("a known image's files appear at their path, read-only, and its /tmp is its own, in its containers only", async () => {
      const mark = `k8semu-private-tmp-${process.pid}`;
      const cmd = `cat /opt/emulated/tool 2>/dev/null | head -1; /opt/emulated/tool 2>/dev/null || echo missing; touch /opt/emulated/x 2>/dev/null || echo read-only; touch /tmp/${mark}; ls /tmp | grep -c .`;
      for (const [name, image] of [
        ['img-known', 'emulated:1'],
        ['img-other', 'bash:5'],
      ])
        await k.core.createNamespacedPod({
          namespace: NS,
          body: {
            metadata: { name },
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'main', image, command: ['sh', '-c', cmd] }],
            },
          },
        });
      await finished(k.core, 'img-known');
      await finished(k.core, 'img-other');
      // the known image's /tmp is its own (only the file it made); the other shares this machine's
      expect(await log(k, 'img-known')).toBe("#!/bin/sh\nthe image's tool\nread-only\n1\n");
      expect(await log(k, 'img-other')).toMatch(/^missing\nread-only\n\d+\n$/);
      expect(existsSync(join('/tmp', mark))).toBe(true); // made by the other image's container
      rmSync(join('/tmp', mark));
      expect(existsSync(join(dir, 'x'))).toBe(false);
    });

    test('volumes appear at their mount paths; nothing is created on the host', async () => {
      const out = join(dir, 'not-on-host', 'outputs');
      await k.core.createNamespacedConfigMap({
        namespace: NS,
        body: {
          metadata: { name: 'files' },
          data: {
            'script.sh': '#!/bin/sh\necho "script at $0"\ncat /etc/sflow-k8semu/note\n',
            note: 'a note\n',
          },
        },
      });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'mounts' },
          spec: {
            restartPolicy: 'Never',
            initContainers: [
              {
                name: 'prep',
                image: 'busybox',
                command: ['sh', '-c', `echo from-init > ${out}/made-by-init`],
                volumeMounts: [{ name: 'out', mountPath: out }],
              },
            ],
            containers: [
              {
                name: 'main',
                image: 'bash:5',
                command: [
                  'sh',
                  '-c',
                  `/sflow/script.sh; cat ${out}/made-by-init; stat -c '%a %n' /etc/sflow-k8semu/sub/renamed; touch /etc/sflow-k8semu/x 2>/dev/null || echo read-only; hostname; pwd`,
                ],
                workingDir: '/work-k8semu',
                volumeMounts: [
                  { name: 'files', mountPath: '/sflow/script.sh', subPath: 'script.sh' },
                  { name: 'items', mountPath: '/etc/sflow-k8semu' },
                  { name: 'out', mountPath: out },
                ],
              },
            ],
            volumes: [
              { name: 'files', configMap: { name: 'files', defaultMode: 0o755 } },
              {
                name: 'items',
                configMap: {
                  name: 'files',
                  items: [
                    { key: 'note', path: 'note' },
                    { key: 'note', path: 'sub/renamed', mode: 0o600 },
                  ],
                },
              },
              { name: 'out', emptyDir: {} },
            ],
          },
        },
      });
      const pod = await finished(k.core, 'mounts');
      expect(pod.status!.phase).toBe('Succeeded');
      expect(pod.status!.initContainerStatuses![0].state!.terminated!.exitCode).toBe(0);
      expect(await log(k, 'mounts')).toBe(
        `script at /sflow/script.sh\na note\nfrom-init\n600 /etc/sflow-k8semu/sub/renamed\nread-only\nmounts\n/work-k8semu\n`,
      );
      expect(await log(k, 'mounts', 'prep')).toBe('');
      for (const p of ['/sflow', '/etc/sflow-k8semu', '/work-k8semu', join(dir, 'not-on-host')])
        expect(existsSync(p)).toBe(false);
    });

    test("the container's home is its own: empty, writable, and not this machine's /root", async () => {
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod(
          'home',
          'echo "home=$HOME"; ls -A "$HOME" | wc -l; touch "$HOME/.k8semu-home" && echo made',
        ),
      });
      await finished(k.core, 'home');
      expect(await log(k, 'home')).toBe('home=/root\n0\nmade\n');
      expect(existsSync('/root/.k8semu-home')).toBe(false);
    });

    test('env: envFrom (prefix), valueFrom refs, $(VAR) expansion, explicit env wins; hostNetwork hostname is the node', async () => {
      await k.core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'cfg' }, data: { MODE: 'fast', SHARED: 'from-cm' } },
      });
      await k.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'sec' }, stringData: { KEY: 'k1' } },
      });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: shPod('env', '', {
          hostNetwork: true,
          nodeSelector: { 'kubernetes.io/hostname': 'node-1' },
          containers: [
            {
              name: 'main',
              image: 'bash:5',
              command: [
                'sh',
                '-c',
                'echo "$MODE $CFG_SHARED $S_KEY $FROM_KEY $SHARED $ME $NODE $IP $(hostname)"; echo "$1"',
                'sh',
                'arg=$(MODE)/$$(MODE)',
              ],
              envFrom: [
                { configMapRef: { name: 'cfg' } },
                { prefix: 'CFG_', configMapRef: { name: 'cfg' } },
                { prefix: 'S_', secretRef: { name: 'sec' } },
              ],
              env: [
                { name: 'FROM_KEY', valueFrom: { secretKeyRef: { name: 'sec', key: 'KEY' } } },
                { name: 'SHARED', value: 'explicit' },
                { name: 'ME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              ],
            },
          ],
        }),
      });
      await finished(k.core, 'env');
      expect(await log(k, 'env')).toBe(
        'fast from-cm k1 k1 explicit env node-1 127.10.0.2 node-1\narg=fast/$(MODE)\n',
      );
    });

    test('a Secret reaches the process environment, never argv nor the request log', async () => {
      const value = `s3cr3t-${process.pid}-value`;
      const flag = join(dir, 'secret-go');
      await k.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'task-env' }, stringData: { API_TOKEN: value } },
      });
      await k.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'secretive' },
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'main',
                image: 'bash:5',
                command: [
                  'sh',
                  '-c',
                  `printf %s "$API_TOKEN" | sha256sum | cut -c1-64; cat /var/run/k8semu-secret/API_TOKEN | wc -c; while [ ! -e ${flag} ]; do sleep 0.05; done`,
                ],
                envFrom: [{ secretRef: { name: 'task-env' } }],
                volumeMounts: [{ name: 's', mountPath: '/var/run/k8semu-secret' }],
              },
            ],
            volumes: [{ name: 's', secret: { secretName: 'task-env' } }],
          },
        },
      });
      const hash = createHash('sha256').update(value).digest('hex');
      await waitFor(
        'the hash in the log',
        async () => (await log(k, 'secretive')).includes(hash) || undefined,
      );
      expect(processesWith(value)).toEqual([]); // in no process's argv
      writeFileSync(flag, '');
      await finished(k.core, 'secretive');
      expect(await log(k, 'secretive')).toBe(`${hash}\n${value.length}\n`);
      const requestLog = readFileSync(k.emu.requestLogPath, 'utf8');
      expect(requestLog).toContain('/api/v1/namespaces/default/secrets');
      expect(requestLog).not.toContain(value);
      expect(requestLog).not.toContain(Buffer.from(value).toString('base64'));
    });
  },
);
