/**
 * Kubernetes at scale: M one-GPU sleep pods (one task, M replicas) on N emulated nodes, for
 * (N, M) = (16, 64), (64, 256), (128, 1000). `sflow run` runs as its own process against the
 * emulator (test/fixtures/k8s-emulator) started here; API requests are counted from the
 * emulator's request log. Prints a table, writes bench/scale-k8s.json.
 *
 * Run (after `npm run build`; Node 20, root for the emulator's namespaces):
 *   node --import ./test/fixtures/ts-loader/register.js bench/scale-k8s.mjs [N:M …]
 * (default 16:64 64:256 128:1000; HOLD_S each pod's sleep, by default max(20, 0.3 M) s so every pod
 * runs at once before the first ends (the 1,000-pod start takes ~140 s here); GPUS per node = ceil(M/N); one pod
 * per replica: `merge_colocated_gpu_pods: false`, MERGE=1 for sflow's default merged pods)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../test/fixtures/k8s-emulator/server.ts';
import { fit, marginal, phases, runEvents, runSflow, table, writeJson } from './scale-lib.mjs';

const SIZES = (process.argv.slice(2).length ? process.argv.slice(2) : ['16:64', '64:256', '128:1000']).map(
  (s) => s.split(':').map(Number),
);
const holdFor = (pods) => Number(process.env.HOLD_S ?? Math.max(20, Math.ceil(pods * 0.3)));
// one pod per replica by default (MERGE=1: sflow's default, replicas on one node share a pod)
const MERGE = process.env.MERGE === '1';

export function recipe(pods, gpusPerNode, nodes, hold) {
  return `version: '0.1'
backends:
  - name: cluster
    type: kubernetes
    default: true
    namespace: default
    nodes: ${nodes}
    gpus_per_node: ${gpusPerNode}
    merge_colocated_gpu_pods: ${MERGE}
operators:
  - name: pod
    type: k8s
    image: bash:5
workflow:
  name: scale_k8s
  tasks:
    - name: serve
      operator: pod
      replicas:
        count: ${pods}
      resources:
        gpus:
          count: 1
      script:
        - exec sleep ${hold}
`;
}

/** requests that are a poll of pod status (list/get pods, not watches, not logs) */
const isStatusRead = (q) =>
  q.method === 'GET' &&
  /\/pods(\/[^/]+)?$/.test(q.path) &&
  !(q.query.watch === 'true' || q.query.watch === '1');

async function measure(nodes, pods) {
  const gpus = Math.ceil(pods / nodes);
  const emu = await startEmulator({ nodes, gpus, warnUnsupported: false });
  const dir = mkdtempSync(join(tmpdir(), 'sflow-scale-k8s-'));
  try {
    writeFileSync(join(dir, 'r.yaml'), recipe(pods, gpus, nodes, holdFor(pods)));
    const { done } = runSflow(['run', '-f', 'r.yaml', '--kubeconfig', emu.kubeconfigPath], { cwd: dir });
    const r = await done;
    const ev = runEvents(dir);
    const p = phases(ev);
    const reqs = emu.requests();
    const t0 = ev.length ? ev[0].t : 0;
    // status reads while every pod runs (between the last start and the first exit): per second
    const first = reqs.length ? Date.parse(reqs[0].time) : 0;
    const last = reqs.length ? Date.parse(reqs.at(-1).time) : 0;
    const statusReads = reqs.filter(isStatusRead).length;
    const watches = reqs.filter((q) => q.query.watch === 'true' || q.query.watch === '1').length;
    const logs = reqs.filter((q) => q.path.endsWith('/log')).length;
    if (process.env.KEEP) writeFileSync(join(dir, 'stderr.txt'), r.stderr);
    const warnings = (r.stderr.match(/MaxListenersExceededWarning/g) ?? []).length;
    return {
      nodes,
      pods,
      holdS: holdFor(pods),
      exit: r.code,
      status: p.status,
      wallS: +(r.wallMs / 1000).toFixed(2),
      allocS: p.allocatedS,
      firstStartS: p.firstStartS,
      allStartedS: p.allStartedS,
      teardownS: p.teardownS,
      peakMiB: Math.round(r.peakMiB),
      apiRequests: reqs.length,
      statusReads,
      statusReadsPerS: +(statusReads / Math.max(1, (last - first) / 1000)).toFixed(2),
      watches,
      logStreams: logs,
      calls: p.calls,
      failedCalls: p.failedCalls,
      listenerWarnings: warnings,
      _t0: t0,
    };
  } finally {
    await emu.stop();
    if (process.env.KEEP) console.error(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const [n, m] of SIZES) {
  const row = await measure(n, m);
  delete row._t0;
  rows.push(row);
  console.error(JSON.stringify(row));
}
const cols = Object.keys(rows[0]);
console.log(table(rows, cols));
if (rows.length > 1) {
  const xs = rows.map((r) => r.pods);
  const started = rows.map((r) => r.allStartedS - r.firstStartS);
  console.log(
    `\nstart spread per added pod (s): ${marginal(xs, started)
      .map((v) => v.toFixed(4))
      .join(', ')}`,
  );
  console.log(
    `time to all started: ${JSON.stringify(
      fit(
        xs,
        rows.map((r) => r.allStartedS),
      ),
    )}`,
  );
  console.log(
    `peak MiB: ${JSON.stringify(
      fit(
        xs,
        rows.map((r) => r.peakMiB),
      ),
    )}`,
  );
}
console.log(`\nwrote ${writeJson('scale-k8s', { merged: MERGE, rows })}`);
