/**
 * Shared setup of the Kubernetes-emulator suites: start an emulator on an ephemeral port, a
 * client-node API client and an async kubectl runner against it, polling with deadlines, pod
 * manifests, and the checks that nothing is left behind (processes, mounts).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { namespacesAvailable } from '../../fixtures/k8s-emulator/sandbox.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../fixtures/k8s-emulator/server.js';

export const required = process.env.SFLOW_REQUIRE_ENGINES === '1';

/** Why pods with volume mounts cannot run here (undefined when they can). */
export function sandboxMissing(): string | undefined {
  return namespacesAvailable() ? undefined : 'private mount namespaces need root and util-linux unshare';
}

export function kubectlMissing(): string | undefined {
  return existsSync('/usr/bin/kubectl') ? undefined : 'kubectl is not installed (/usr/bin/kubectl)';
}

/** a TCP port free on every address right now (for a recipe's service) */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface K8s {
  emu: Emulator;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
}

export async function startK8s(opts: EmulatorOptions = {}): Promise<K8s> {
  const emu = await startEmulator({ nodes: 2, gpus: 4, warnUnsupported: false, ...opts });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(emu.kubeconfigPath);
  return { emu, kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl, asynchronously (the emulator lives in this process: a blocking call would deadlock). */
export function kubectl(emu: Emulator, args: string[], timeoutMs = 30_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      args,
      { env: { ...process.env, KUBECONFIG: emu.kubeconfigPath }, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function podGone(core: k8s.CoreV1Api, name: string, namespace = 'default'): Promise<boolean> {
  try {
    await core.readNamespacedPod({ name, namespace });
    return false;
  } catch (e) {
    if ((e as { code?: number }).code === 404) return true;
    throw e;
  }
}

export const phaseOf = async (core: k8s.CoreV1Api, name: string): Promise<string | undefined> =>
  (await core.readNamespacedPod({ name, namespace: 'default' })).status?.phase;

export const finished = (core: k8s.CoreV1Api, name: string) =>
  waitFor(`pod ${name} to finish`, async () => {
    const p = await core.readNamespacedPod({ name, namespace: 'default' });
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  });

/** A one-container pod running `sh -c script`; `extra` is merged into the spec. */
export function shPod(
  name: string,
  script: string,
  extra: Partial<k8s.V1PodSpec> = {},
  labels: Record<string, string> = {},
): k8s.V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'bash:5', command: ['sh', '-c', script] }],
      ...extra,
    },
  };
}

/** Host processes whose command line contains `marker` (should be none once pods are gone). */
export function processesWith(marker: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker) && Number(pid) !== process.pid) out.push(`${pid}: ${cmd}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** Mounts in this (the host's) mount namespace that the emulator could have left. */
export function emulatorMounts(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => /k8semu/.test(l));
}

/** Every line of the text of a followed log stream (client-node Log) until it ends. */
export async function followLog(
  kc: k8s.KubeConfig,
  name: string,
  onData: (chunk: string) => void,
  opts: { container?: string; timestamps?: boolean } = {},
): Promise<string> {
  const { PassThrough } = await import('node:stream');
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => {
    text += d.toString();
    onData(d.toString());
  });
  const ended = new Promise<void>((r) => out.on('end', r));
  await new k8s.Log(kc).log('default', name, opts.container ?? 'main', out, {
    follow: true,
    timestamps: opts.timestamps,
  });
  await ended;
  return text;
}
