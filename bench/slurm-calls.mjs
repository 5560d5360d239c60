/* global process, console, performance */
// Slurm control-plane load of `sflow run` on the project's Slurm test cluster: every Slurm command
// sflow runs (salloc, srun, scontrol, squeue, scancel, sinfo, sacct) goes through a logging shim
// first on PATH, so all calls are counted, not only the traced ones. For N independent tasks
// (`sleep HOLD`, all running at once as `--overlap` steps of one 1-node allocation) it reports the
// calls per minute by command, the status calls (`scontrol show step` / `squeue`) per minute —
// which must not grow with N — and the time from starting `sflow run` to the first step running
// (the first task_started event) on the idle cluster. Needs `scripts/engines/slurm.sh up`.
// Run:  node bench/slurm-calls.mjs [N…]   (default: 5 50; HOLD=20 seconds per task)
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, scratch } from './lib.mjs';

const envFile = join(process.env.SFLOW_ENGINES_DIR || '/tmp/sflow-engines', 'slurm.env');
const clusterEnv = Object.fromEntries(
  readFileSync(envFile, 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const HOLD = Number(process.env.HOLD ?? 20);
const COMMANDS = ['salloc', 'srun', 'scontrol', 'squeue', 'scancel', 'sinfo', 'sacct', 'sbatch'];

function shims(dir, log) {
  const bin = join(dir, 'shim-bin');
  mkdirSync(bin);
  const real = (c) => (process.env.PATH ?? '').split(':').map((p) => join(p, c));
  for (const c of COMMANDS) {
    const path = real(c).find((p) => {
      try {
        return readFileSync(p).length > 0;
      } catch {
        return false;
      }
    });
    if (!path) continue;
    writeFileSync(
      join(bin, c),
      `#!/bin/sh\nprintf '%s %s %s\\n' "$(date +%s.%N)" ${c} "$*" >> '${log}'\nexec '${path}' "$@"\n`,
    );
    chmodSync(join(bin, c), 0o755);
  }
  return bin;
}

function recipe(dir, n) {
  const f = join(dir, `calls${n}.yaml`);
  writeFileSync(
    f,
    [
      "version: '0.1'",
      'workflow:',
      `  name: sflowbench-calls${n}`,
      '  tasks:',
      ...Array.from({ length: n }, (_, i) => `    - name: t${i}\n      script: ["sleep ${HOLD}"]`),
      'backends:',
      '  - name: cluster',
      '    type: slurm',
      '    default: true',
      `    partition: ${clusterEnv.SFLOW_TEST_SLURM_PARTITION}`,
      '    account: sflowbench',
      "    time: '00:10:00'",
      '    nodes: 1',
    ].join('\n') + '\n',
  );
  return f;
}

async function measure(n) {
  const dir = scratch('sflow-bench-slurm-');
  try {
    const log = join(dir, 'calls.log');
    writeFileSync(log, '');
    const bin = shims(dir, log);
    const t0 = Date.now();
    const t0p = performance.now();
    const code = await new Promise((resolve) => {
      const p = spawn(process.execPath, [BIN, 'run', '-f', recipe(dir, n)], {
        cwd: dir,
        env: { ...process.env, ...clusterEnv, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' },
        stdio: 'ignore',
      });
      p.on('close', resolve);
    });
    const wall = (performance.now() - t0p) / 1000;
    const out = join(dir, 'sflow_output');
    const run = join(
      out,
      readdirSync(out).find((d) => !d.startsWith('_')),
    );
    const events = readFileSync(join(run, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const firstStart = events.find((e) => e.type === 'task_started');
    const calls = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' '));
    const byCmd = {};
    const words = (a) =>
      a
        .filter((w) => !w.startsWith('-'))
        .slice(0, 2)
        .join(' ');
    for (const [, c, ...args] of calls) {
      const k = c === 'scontrol' ? `scontrol ${words(args)}` : c;
      byCmd[k] = (byCmd[k] ?? 0) + 1;
    }
    const status = calls.filter(
      ([, c, ...args]) => (c === 'scontrol' && words(args) === 'show step') || c === 'squeue',
    );
    const minutes = wall / 60;
    return {
      n,
      code,
      wall: wall.toFixed(1),
      firstStepS: firstStart ? ((firstStart.t - t0) / 1000).toFixed(2) : 'none',
      calls: calls.length,
      perMin: (calls.length / minutes).toFixed(0),
      statusPerMin: (status.length / minutes).toFixed(1),
      byCmd,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length ? sizes : [5, 50]) {
  const r = await measure(n);
  console.log(
    `${r.n} tasks: exit ${r.code}, ${r.wall} s; first step running after ${r.firstStepS} s; ${r.calls} Slurm calls (${r.perMin}/min), status calls ${r.statusPerMin}/min; ${JSON.stringify(r.byCmd)}`,
  );
}
