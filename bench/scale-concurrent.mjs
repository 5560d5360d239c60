/**
 * Concurrent runs on one cluster: 1, 5 and 20 runs of the same serving recipe at once (a server
 * with a log readiness probe, a client that starts once it is READY, the server stopped at the
 * end), against one Kubernetes emulator (8 nodes × 8 GPUs) and one Slurm cluster (20 nodes,
 * scripts/engines/slurm.sh, each run one node). Reports each run's wall time and control calls,
 * the control-call latency sflow saw (mean and worst, from its external_call events), and
 * failed control calls (must be 0). Prints a table, writes bench/scale-concurrent.json.
 *
 * Run (as root, after `npm run build`, SFLOW_ENGINES_DIR set):
 *   node --import ./test/fixtures/ts-loader/register.js bench/scale-concurrent.mjs [k8s|slurm] [R…]
 * (default: both engines, R = 1 5 20; HOLD=8 seconds the client runs)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../test/fixtures/k8s-emulator/server.ts';
import { phases, root, runEvents, runSflow, table, writeJson } from './scale-lib.mjs';
import { cluster } from './scale-slurm.mjs';

const args = process.argv.slice(2);
const ENGINES = args.filter((a) => a === 'k8s' || a === 'slurm');
const SIZES = args.map(Number).filter(Boolean);
const HOLD = Number(process.env.HOLD ?? 8);

function recipe(engine, slurmPartition) {
  const backend =
    engine === 'k8s'
      ? `  - name: cluster
    type: kubernetes
    default: true
    namespace: default
    nodes: 1
    gpus_per_node: 2
operators:
  - name: pod
    type: k8s
    image: bash:5
`
      : `  - name: cluster
    type: slurm
    default: true
    partition: ${slurmPartition}
    account: sflowbench
    time: '00:10:00'
    nodes: 1
    gpus_per_node: 2
`;
  const op = engine === 'k8s' ? '      operator: pod\n' : '';
  return `version: '0.1'
backends:
${backend}workflow:
  name: serve
  tasks:
    - name: server
${op}      resources: {gpus: {count: 1}}
      script:
        - echo SERVING
        - exec sleep 600
      probes:
        readiness:
          log_watch:
            regex_pattern: SERVING
          interval: 1
          timeout: 120
    - name: client
${op}      depends_on: [server]
      resources: {gpus: {count: 1}}
      script: ["sleep ${HOLD}"]
`;
}

/** one calls' latencies (ms) of a run, without the long-lived streams (log follows, watches) */
function latencies(events) {
  return events
    .filter((e) => e.type === 'external_call' && !e.args.includes('--follow') && !e.args.includes('watch'))
    .map((e) => e.durationMs);
}

async function round(engine, runs, target) {
  const base = mkdtempSync(join(tmpdir(), `sflow-scale-conc-${engine}-`));
  try {
    const started = [];
    for (let i = 0; i < runs; i++) {
      const dir = join(base, `r${i}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'r.yaml'), recipe(engine, target.partition));
      const extra = engine === 'k8s' ? ['--kubeconfig', target.kubeconfig] : [];
      started.push({
        dir,
        done: runSflow(['run', '-f', 'r.yaml', ...extra], { cwd: dir, env: target.env }).done,
      });
    }
    const out = [];
    for (const s of started) {
      const r = await s.done;
      const ev = runEvents(s.dir);
      out.push({ r, p: phases(ev), lat: latencies(ev) });
    }
    const lat = out.flatMap((o) => o.lat);
    const walls = out.map((o) => o.r.wallMs / 1000);
    return {
      engine,
      runs,
      completed: out.filter((o) => o.p.status === 'COMPLETED').length,
      wallMeanS: +(walls.reduce((a, b) => a + b, 0) / runs).toFixed(2),
      wallMaxS: +Math.max(...walls).toFixed(2),
      callsPerRun: Math.round(out.reduce((a, o) => a + o.p.calls, 0) / runs),
      latencyMeanMs: lat.length ? Math.round(lat.reduce((a, b) => a + b, 0) / lat.length) : undefined,
      latencyMaxMs: lat.length ? Math.round(Math.max(...lat)) : undefined,
      failedCalls: out.reduce((a, o) => a + o.p.failedCalls, 0),
      peakMiBMax: Math.round(Math.max(...out.map((o) => o.r.peakMiB))),
      ...(target.requests ? { apiRequests: target.requests() } : {}),
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const rows = [];
const sizes = SIZES.length ? SIZES : [1, 5, 20];
if (!ENGINES.length || ENGINES.includes('k8s')) {
  const emu = await startEmulator({ nodes: 8, gpus: 8, warnUnsupported: false });
  try {
    for (const n of sizes) {
      const before = emu.requests().length;
      const row = await round('k8s', n, {
        kubeconfig: emu.kubeconfigPath,
        env: {},
        requests: () => emu.requests().length - before,
      });
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  } finally {
    await emu.stop();
  }
}
if (!ENGINES.length || ENGINES.includes('slurm')) {
  const { env } = cluster(Math.max(...sizes));
  try {
    for (const n of sizes) {
      const row = await round('slurm', n, {
        partition: env.SFLOW_TEST_SLURM_PARTITION,
        env: { ...env, NO_COLOR: '1' },
      });
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  } finally {
    execFileSync(join(root, 'scripts/engines/slurm.sh'), ['down'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}
const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
console.log(table(rows, cols));
console.log(`\nwrote ${writeJson('scale-concurrent', { holdS: HOLD, rows })}`);
