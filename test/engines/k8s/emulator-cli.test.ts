/**
 * The emulator as a separate process (its command line, for development): it prints a working
 * kubeconfig, stops cleanly on SIGTERM, and even when SIGKILLed its pods' processes die with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, describe, expect, test } from 'vitest';
import { processesWith, required, sandboxMissing, shPod, waitFor } from './harness.js';

const missing = sandboxMissing();
const repo = join(import.meta.dirname, '..', '..', '..');

async function launch(
  stateDir: string,
): Promise<{ child: ChildProcess; kc: k8s.KubeConfig; stdout: () => string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      './test/fixtures/ts-loader/register.js',
      'test/fixtures/k8s-emulator/main.ts',
      '--port',
      '0',
      '--nodes',
      '2',
      '--gpus',
      '4',
      '--state-dir',
      stateDir,
    ],
    { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.resume();
  await waitFor(
    'the kubeconfig on stdout',
    () => (out.includes('current-context: k8semu') ? true : undefined),
    30_000,
  );
  const kc = new k8s.KubeConfig();
  kc.loadFromString(out);
  return { child, kc, stdout: () => out };
}

describe.skipIf(missing !== undefined && !required)(
  `the emulator process${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const children: ChildProcess[] = [];
    afterAll(() => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    for (const signal of ['SIGTERM', 'SIGKILL'] as const)
      test(`--port 0 --nodes 2 --gpus 4 prints its kubeconfig; ${signal} leaves no pod process behind`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'k8semu-cli-'));
        dirs.push(dir);
        const { child, kc } = await launch(dir);
        children.push(child);
        expect(kc.getCurrentCluster()!.server).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const core = kc.makeApiClient(k8s.CoreV1Api);
        expect((await core.listNode()).items.map((n) => n.status!.allocatable!['nvidia.com/gpu'])).toEqual([
          '4',
          '4',
        ]);
        const marker = `cli-mark-${signal}-${process.pid}`;
        await core.createNamespacedPod({
          namespace: 'default',
          body: shPod(
            'bg',
            `sh -c 'sleep 300; true' ${marker}-child & while :; do sleep 0.1; done # ${marker}`,
          ),
        });
        await waitFor(
          'bg running',
          async () =>
            (await core.readNamespacedPod({ namespace: 'default', name: 'bg' })).status?.phase ===
              'Running' || undefined,
        );
        await waitFor('both pod processes', () => (processesWith(marker).length >= 2 ? true : undefined));
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        await exited;
        await waitFor('the pod processes to die with the emulator', () =>
          processesWith(marker).length === 0 ? true : undefined,
        );
        expect(existsSync(join(dir, 'requests.jsonl'))).toBe(true); // --state-dir is kept
      });
  },
);
