/**
 * Debian's kubectl, unchanged, against the emulator: proof that the emulator speaks the
 * Kubernetes protocol (discovery, Table printing, apply/create with server-side field
 * validation, logs and follow, graceful delete with wait, delete by label), not only one client's
 * dialect.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  emulatorMounts,
  kubectl,
  kubectlMissing,
  processesWith,
  required,
  sandboxMissing,
  startK8s,
  waitFor,
  type K8s,
} from './harness.js';

const missing = kubectlMissing() ?? sandboxMissing();
const MARK = `kubectl-mark-${process.pid}`;

describe.skipIf(missing !== undefined && !required)(
  `kubectl against the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s;
    let dir: string;
    const manifest = (name: string, script: string, labels: Record<string, string> = {}) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels },
          spec: {
            restartPolicy: 'Never',
            terminationGracePeriodSeconds: 5,
            containers: [{ name: 'main', image: 'bash:5', command: ['sh', '-c', script, MARK] }],
          },
        }),
      );
      return file;
    };

    beforeAll(async () => {
      if (missing) throw new Error(missing);
      dir = mkdtempSync(join(tmpdir(), 'k8semu-kubectl-'));
      k = await startK8s({ nodes: 2, gpus: 4 });
    });
    afterAll(async () => {
      await k?.emu.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
      expect(processesWith(MARK)).toEqual([]);
      expect(emulatorMounts()).toEqual([]);
    });

    test('get nodes prints the synthetic nodes with their InternalIP', async () => {
      const r = await kubectl(k.emu, ['get', 'nodes', '-o', 'wide']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP/);
      expect(r.stdout).toMatch(/node-0\s+Ready\s+<none>\s+\S+\s+v1\.34\.0-k8semu\s+127\.10\.0\.1/);
      expect(r.stdout).toMatch(/node-1\s+Ready.*127\.10\.0\.2/);
      const gpus = await kubectl(k.emu, [
        'get',
        'node',
        'node-1',
        '-o',
        'jsonpath={.status.allocatable.nvidia\\.com/gpu}',
      ]);
      expect(gpus.stdout).toBe('4');
    });

    test('apply -f runs a pod; get -l, logs byte-exact, exit code in the status', async () => {
      const file = manifest(
        'applied',
        'printf "line one\\n"; printf "partial"; echo " to stderr" >&2; exit 7',
        { app: 'demo' },
      );
      const r = await kubectl(k.emu, ['apply', '-f', file]);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('pod/applied created');
      await waitFor('applied to fail', async () => {
        const s = await kubectl(k.emu, ['get', 'pod', 'applied', '-o', 'jsonpath={.status.phase}']);
        return s.stdout === 'Failed' || undefined;
      });
      const list = await kubectl(k.emu, ['get', 'pods', '-l', 'app=demo']);
      expect(list.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
      expect(list.stdout).toMatch(/applied\s+0\/1\s+Error\s+0\s+/);
      expect((await kubectl(k.emu, ['get', 'pods', '-l', 'app=other'])).stderr).toMatch(/No resources found/);
      const logs = await kubectl(k.emu, ['logs', 'applied']);
      expect(logs.stdout).toBe('line one\npartial to stderr\n');
      const code = await kubectl(k.emu, [
        'get',
        'pod',
        'applied',
        '-o',
        'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}',
      ]);
      expect(code.stdout).toBe('7');
      // applying the same manifest again is a no-op patch, not an error
      expect((await kubectl(k.emu, ['apply', '-f', file])).stdout.trim()).toBe('pod/applied unchanged');
    });

    test('logs -f streams while the pod runs and returns when it ends', async () => {
      const flag = join(dir, 'go');
      const file = manifest(
        'follow',
        `echo started; while [ ! -e ${flag} ]; do sleep 0.05; done; echo finished`,
      );
      expect((await kubectl(k.emu, ['create', '-f', file])).stdout.trim()).toBe('pod/follow created');
      await waitFor(
        'follow to run',
        async () =>
          (await kubectl(k.emu, ['get', 'pod', 'follow', '-o', 'jsonpath={.status.phase}'])).stdout ===
            'Running' || undefined,
      );
      const { spawn } = await import('node:child_process');
      const child = spawn('kubectl', ['logs', '-f', 'follow'], {
        env: { ...process.env, KUBECONFIG: k.emu.kubeconfigPath },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      await waitFor('the first line through logs -f', () => out.includes('started\n') || undefined);
      expect(out).not.toContain('finished'); // streamed before the pod ended
      writeFileSync(flag, '');
      expect(await exited).toBe(0);
      expect(out).toBe('started\nfinished\n');
    });

    test('delete pod waits until the processes are gone; delete pods -l removes every match', async () => {
      for (const n of ['d1', 'd2', 'd3'])
        expect(
          (
            await kubectl(k.emu, [
              'apply',
              '-f',
              manifest(n, 'trap "exit 0" TERM; while :; do sleep 0.05; done', { batch: 'x' }),
            ])
          ).code,
        ).toBe(0);
      await waitFor('three running pods', async () => {
        const r = await kubectl(k.emu, [
          'get',
          'pods',
          '-l',
          'batch=x',
          '-o',
          'jsonpath={.items[*].status.phase}',
        ]);
        return r.stdout === 'Running Running Running' || undefined;
      });
      expect(processesWith(MARK).length).toBeGreaterThanOrEqual(3);
      const one = await kubectl(k.emu, ['delete', 'pod', 'd1']);
      expect(one.stdout.trim()).toBe('pod "d1" deleted');
      expect((await kubectl(k.emu, ['get', 'pod', 'd1'])).stderr).toMatch(/NotFound.*pods "d1" not found/);
      const rest = await kubectl(k.emu, ['delete', 'pods', '-l', 'batch=x']);
      expect(rest.stdout).toContain('pod "d2" deleted');
      expect(rest.stdout).toContain('pod "d3" deleted');
      expect((await kubectl(k.emu, ['get', 'pods', '-l', 'batch=x'])).stderr).toMatch(/No resources found/);
      await waitFor(
        'no pod processes',
        () => processesWith('while :; do sleep 0.05').length === 0 || undefined,
      );
    });

    test('exec runs in the container (its hostname), passes stdin, stdout/stderr and exit codes; cp copies out', async () => {
      const file = manifest('shell', 'while :; do sleep 0.05; done');
      expect((await kubectl(k.emu, ['apply', '-f', file])).code).toBe(0);
      await waitFor(
        'shell running',
        async () =>
          (await kubectl(k.emu, ['get', 'pod', 'shell', '-o', 'jsonpath={.status.phase}'])).stdout ===
            'Running' || undefined,
      );
      const r = await kubectl(k.emu, [
        'exec',
        'shell',
        '--',
        'sh',
        '-c',
        `hostname; echo out > ${dir}/exec-made; echo oops >&2; exit 5`,
      ]);
      expect(r.stdout).toBe('shell\n');
      expect(r.stderr).toContain('oops\n');
      expect(r.code).toBe(5);
      const { spawn } = await import('node:child_process');
      const child = spawn('kubectl', ['exec', '-i', 'shell', '--', 'sh', '-c', 'tr a-z A-Z'], {
        env: { ...process.env, KUBECONFIG: k.emu.kubeconfigPath },
      });
      let upper = '';
      child.stdout.on('data', (d: Buffer) => (upper += d.toString()));
      child.stdin.end('through stdin\n');
      expect(await new Promise((r) => child.on('close', r))).toBe(0);
      expect(upper).toBe('THROUGH STDIN\n');
      const dest = join(dir, 'copied');
      expect((await kubectl(k.emu, ['cp', `shell:${dir}/exec-made`, dest])).code).toBe(0);
      expect(readFileSync(dest, 'utf8')).toBe('out\n');
      const execs = k.emu.requests().filter((q) => q.path.endsWith('/pods/shell/exec'));
      expect(execs.map((q) => q.status)).toEqual([101, 101, 101]);
      expect(execs[1].query.command).toEqual(['sh', '-c', 'tr a-z A-Z']);
    });

    test('typed-client commands (protobuf bodies): create configmap/secret/namespace, auth can-i', async () => {
      expect(
        (
          await kubectl(k.emu, ['create', 'configmap', 'c1', '--from-literal=a=1', '--from-literal=b=two'])
        ).stdout.trim(),
      ).toBe('configmap/c1 created');
      expect((await kubectl(k.emu, ['get', 'configmap', 'c1', '-o', 'jsonpath={.data}'])).stdout).toBe(
        '{"a":"1","b":"two"}',
      );
      expect(
        (
          await kubectl(k.emu, [
            'create',
            'secret',
            'generic',
            's1',
            '--from-literal=pw=kubectl-secret-value',
          ])
        ).code,
      ).toBe(0);
      const pw = await kubectl(k.emu, ['get', 'secret', 's1', '-o', 'jsonpath={.data.pw}']);
      expect(Buffer.from(pw.stdout, 'base64').toString()).toBe('kubectl-secret-value');
      expect((await kubectl(k.emu, ['create', 'namespace', 'team-a'])).stdout.trim()).toBe(
        'namespace/team-a created',
      );
      expect((await kubectl(k.emu, ['get', 'namespaces'])).stdout).toMatch(/team-a\s+Active/);
      expect((await kubectl(k.emu, ['auth', 'can-i', 'create', 'pods'])).stdout.trim()).toBe('yes');
      k.emu.deny.add('delete secrets');
      try {
        const no = await kubectl(k.emu, ['auth', 'can-i', 'delete', 'secrets']);
        expect(no.stdout.trim()).toMatch(/^no/);
        const del = await kubectl(k.emu, ['delete', 'secret', 's1']);
        expect(del.stderr).toMatch(/Forbidden.*cannot delete resource "secrets"/);
      } finally {
        k.emu.deny.delete('delete secrets');
      }
      expect((await kubectl(k.emu, ['delete', 'secret', 's1'])).stdout.trim()).toBe('secret "s1" deleted');
      expect(readFileSync(k.emu.requestLogPath, 'utf8')).not.toContain('kubectl-secret-value');
    });

    test('every request kubectl made was understood, apart from OpenAPI v2 (not served)', () => {
      // kubectl apply asks for /openapi/v2 to build strategic merge patches and falls back to its
      // compiled-in types on 404; OpenAPI v3 is served (paths only, no schemas)
      const gaps = k.emu.unsupported().map((r) => `${r.method} ${r.path}`);
      expect(gaps).toEqual(gaps.map(() => 'GET /openapi/v2'));
      expect(k.emu.requests().some((r) => r.path === '/openapi/v3/api/v1')).toBe(true);
    });
  },
);
