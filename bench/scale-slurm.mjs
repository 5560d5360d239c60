/**
 * Slurm at scale: on a cluster of N slurmd "nodes" (scripts/engines/slurm.sh with
 * SFLOW_SLURM_NODES=N, 2 fake GPUs each), one allocation of N nodes runs a task spanning all N
 * nodes and N one-node replicas side by side (each `sleep HOLD`), for N = 8, 32, 128. Every Slurm
 * command sflow runs goes through a logging shim first on PATH, so all are counted. Reports the
 * time to allocate, to the first task start, to all started, the teardown, driver peak memory and
 * the Slurm commands in total and per status tick while everything runs. Prints a table, writes
 * bench/scale-slurm.json. Each N brings its own cluster up (and down at the end).
 *
 * Run (as root, after `npm run build`; SFLOW_ENGINES_DIR set, as for every engine):
 *   node bench/scale-slurm.mjs [N…]        (default 8 32 128; HOLD=20 seconds per task)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fit, phases, root, runEvents, runSflow, table, writeJson } from './scale-lib.mjs';

const SIZES = process.argv.slice(2).map(Number).filter(Boolean);
const HOLD = Number(process.env.HOLD ?? 20);
const TICK_S = 2; // the Slurm backend's poll interval (src/backends/slurm/kind.ts)
const ENG = process.env.SFLOW_ENGINES_DIR;
if (!ENG) throw new Error('set SFLOW_ENGINES_DIR (never the default /tmp/sflow-engines)');
const COMMANDS = ['salloc', 'srun', 'scontrol', 'squeue', 'scancel', 'sinfo', 'sacct', 'sbatch'];

export function cluster(n) {
  const t0 = performance.now();
  execFileSync(join(root, 'scripts/engines/slurm.sh'), ['up'], {
    env: { ...process.env, SFLOW_SLURM_NODES: String(n), SFLOW_SLURM_GPUS_PER_NODE: '2' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const env = Object.fromEntries(
    readFileSync(join(ENG, 'slurm.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { env, upS: +((performance.now() - t0) / 1000).toFixed(1) };
}

/** a logging shim per Slurm command, first on PATH: `<epoch> <cmd> <args>` per call */
export function shims(dir, log) {
  const bin = join(dir, 'shim-bin');
  mkdirSync(bin);
  for (const c of COMMANDS) {
    const path = execFileSync('sh', ['-c', `command -v ${c} || true`], { encoding: 'utf8' }).trim();
    if (!path) continue;
    writeFileSync(
      join(bin, c),
      `#!/bin/sh\nprintf '%s %s %s\\n' "$(date +%s.%N)" ${c} "$*" >> '${log}'\nexec '${path}' "$@"\n`,
    );
    chmodSync(join(bin, c), 0o755);
  }
  return bin;
}

export function readCalls(log) {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => /^\d+\.\d+ /.test(l)) // an argument with a newline continues on the next line
    .map((l) => {
      const [t, cmd, ...args] = l.split(' ');
      return { t: Number(t) * 1000, cmd, args };
    });
}

export const isStatus = (c) =>
  c.cmd === 'squeue' ||
  c.cmd === 'sacct' ||
  (c.cmd === 'scontrol' && c.args.filter((a) => !a.startsWith('-'))[0] === 'show');

function recipe(n, partition) {
  return `version: '0.1'
backends:
  - name: cluster
    type: slurm
    default: true
    partition: ${partition}
    account: sflowbench
    time: '00:20:00'
    nodes: ${n}
    gpus_per_node: 2
workflow:
  name: scale_slurm${n}
  tasks:
    - name: span
      resources: {nodes: {count: ${n}}}
      script: ["sleep ${HOLD}"]
    - name: rep
      replicas: {count: ${n}}
      resources: {nodes: {count: 1}}
      script: ["sleep ${HOLD}"]
`;
}

async function measure(n) {
  const { env, upS } = cluster(n);
  const dir = mkdtempSync(join(tmpdir(), 'sflow-scale-slurm-'));
  try {
    const log = join(dir, 'calls.log');
    writeFileSync(log, '');
    const bin = shims(dir, log);
    writeFileSync(join(dir, 'r.yaml'), recipe(n, env.SFLOW_TEST_SLURM_PARTITION));
    const r = await runSflow(['run', '-f', 'r.yaml'], {
      cwd: dir,
      env: { ...env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' },
    }).done;
    const ev = runEvents(dir);
    const p = phases(ev);
    const calls = readCalls(log);
    const starts = ev.filter((e) => e.type === 'task_started').map((e) => e.t);
    const ends = ev.filter((e) => e.type === 'task_finished').map((e) => e.t);
    // the window in which every task runs: the last start to the first end
    const from = starts.length ? Math.max(...starts) : 0;
    const to = ends.length ? Math.min(...ends) : 0;
    const inWindow = calls.filter((c) => c.t >= from && c.t < to);
    const ticks = Math.max(1, (to - from) / 1000 / TICK_S);
    const byCmd = {};
    for (const c of calls) byCmd[c.cmd] = (byCmd[c.cmd] ?? 0) + 1;
    return {
      nodes: n,
      tasks: n + 1,
      clusterUpS: upS,
      exit: r.code,
      status: p.status,
      wallS: +(r.wallMs / 1000).toFixed(2),
      allocS: p.allocatedS,
      firstStartS: p.firstStartS,
      allStartedS: p.allStartedS,
      teardownS: p.teardownS,
      peakMiB: Math.round(r.peakMiB),
      slurmCalls: calls.length,
      statusCallsPerTick: +(inWindow.filter(isStatus).length / ticks).toFixed(2),
      callsPerTick: +(inWindow.length / ticks).toFixed(2),
      failedCalls: p.failedCalls,
      byCmd: JSON.stringify(byCmd),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// the bench itself (scale-concurrent.mjs imports cluster() from here)
if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();

async function main() {
  const rows = [];
  try {
    for (const n of SIZES.length ? SIZES : [8, 32, 128]) {
      const row = await measure(n);
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  } finally {
    execFileSync(join(root, 'scripts/engines/slurm.sh'), ['down'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  console.log(table(rows, Object.keys(rows[0])));
  if (rows.length > 1) {
    const xs = rows.map((r) => r.nodes);
    console.log(
      `\ntime to all started: ${JSON.stringify(
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
  console.log(`\nwrote ${writeJson('scale-slurm', { holdS: HOLD, rows })}`);
}
