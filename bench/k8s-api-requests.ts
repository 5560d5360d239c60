/**
 * Kubernetes API requests per minute while a run's pods run: `sflow run` (its own process) against
 * the emulator with N single-pod tasks that each sleep, counted from the emulator's request log in
 * a window that starts once every task pod is Running. The rate must not grow with the number of
 * pods (one watch for the run, no per-pod polling); each pod's log stream is one request for its
 * whole life, counted apart.
 *
 * Run (no build; Node 20, root for the emulator's namespaces):
 *   node --import ./test/fixtures/ts-loader/register.js bench/k8s-api-requests.ts [pods…]
 * (default: 10 50; HOLD_S=45 each task's sleep, WINDOW_S=20 the counting window)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../test/fixtures/k8s-emulator/server.js';

const SIZES = process.argv.slice(2).map(Number).filter(Boolean);
const HOLD_S = Number(process.env.HOLD_S ?? 45);
const WINDOW_S = Number(process.env.WINDOW_S ?? 20);
const NODES = 5;
const root = new URL('..', import.meta.url).pathname;

function recipe(pods: number): string {
  const tasks = Array.from(
    { length: pods },
    (_, i) =>
      `    - name: t${i}\n      operator: pod\n      resources:\n        nodes:\n          indices: [${i % NODES}]\n      script:\n        - exec sleep ${HOLD_S}\n`,
  ).join('');
  return `version: '0.1'
backends:
  - name: cluster
    type: kubernetes
    default: true
    namespace: default
    nodes: ${NODES}
    gpus_per_node: 0
operators:
  - name: pod
    type: k8s
    image: bash:5
workflow:
  name: api_bench
  tasks:
${tasks}`;
}

/** `GET pods (watch)`, `GET pods/log`, `POST pods`, … */
function kind(method: string, path: string, query: Record<string, unknown>): string {
  const parts = path.split('/').filter(Boolean);
  const ns = parts.indexOf('namespaces');
  const rest = ns >= 0 ? parts.slice(ns + 2) : parts.slice(-1);
  const res = rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? 'namespaces');
  return `${method} ${res}${query.watch === 'true' || query.watch === '1' ? ' (watch)' : ''}`;
}

async function measure(pods: number) {
  const emu = await startEmulator({ nodes: NODES, gpus: 0, warnUnsupported: false });
  const dir = mkdtempSync(join(tmpdir(), 'sflow-bench-k8s-'));
  try {
    const file = join(dir, 'bench.yaml');
    writeFileSync(file, recipe(pods));
    const child = spawn(
      process.execPath,
      [
        '--import',
        join(root, 'test/fixtures/ts-loader/register.js'),
        join(root, 'test/engines/k8s/fixtures/sflow-cli.ts'),
        'run',
        '-f',
        file,
        '--kubeconfig',
        emu.kubeconfigPath,
      ],
      { cwd: dir, stdio: 'ignore', env: { ...process.env, SFLOW_TASK_OUTPUT: 'never' } },
    );
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const running = () =>
      (
        emu.store.list('pods', 'default') as Array<{
          metadata: { labels?: Record<string, string> };
          status?: { phase?: string };
        }>
      ).filter((p) => p.metadata.labels?.['sflow/role'] === 'task' && p.status?.phase === 'Running').length;
    const deadline = Date.now() + 300_000;
    while (running() < pods) {
      if (Date.now() > deadline) throw new Error(`only ${running()} of ${pods} pods running`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const from = Date.now();
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
    const to = Date.now();
    const inWindow = emu.requests().filter((q) => {
      const t = Date.parse(q.time);
      return t >= from && t < to;
    });
    const code = await exited;
    const byKind = new Map<string, number>();
    for (const q of inWindow) {
      const k = kind(q.method, q.path, q.query);
      byKind.set(k, (byKind.get(k) ?? 0) + 1);
    }
    const perMin = (n: number) => ((n * 60_000) / (to - from)).toFixed(1);
    const logs = byKind.get('GET pods/log') ?? 0;
    console.log(
      `${pods} pods: ${perMin(inWindow.length)} requests/min while running (${inWindow.length} in ${((to - from) / 1000).toFixed(1)} s` +
        `, of which ${logs} log streams opened); whole run ${emu.requests().length} requests, exit ${code}`,
    );
    console.log(`  in the window: ${[...byKind].map(([k, n]) => `${k}: ${n}`).join('; ') || 'none'}`);
    const all = new Map<string, number>();
    for (const q of emu.requests()) {
      const k = kind(q.method, q.path, q.query);
      all.set(k, (all.get(k) ?? 0) + 1);
    }
    console.log(`  whole run: ${[...all].map(([k, n]) => `${k}: ${n}`).join('; ')}`);
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const n of SIZES.length ? SIZES : [10, 50]) await measure(n);
