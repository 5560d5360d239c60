/* global process, console */
// Task launch side by side (issue 18), in one invocation, rounds interleaved so the machine's load
// hits every contender alike: a 200-link chain and 200 independent `true` tasks through `sflow run`
// (each launcher: perl, node, inline), the bash floor (a loop of `bash -c true`), a bare Node spawn
// loop, and Snakemake 7 (`-j1`; `--scheduler greedy -j2` for independent tasks, bench/Snakefile);
// plus start-up: `node -e 0`, `sflow --help`, a one-task `sflow run`. Medians of wall time and of
// CPU time (user + system of the whole process tree: the figure to read on a shared machine).
//
//   node bench/launch.mjs                 RUNS=5 N=200 (after npm run build)
//   node bench/launch.mjs --quick         RUNS=3 N=50, sflow (default launcher) and the floors only;
//                                         fails when a CPU ratio to the floor is more than 2× the
//                                         one in bench/quick-baseline.json twice running (a second
//                                         measurement confirms); CI: npm run bench:quick;
//                                         BENCH_RECORD=1 rewrites that file, BENCH_BASELINE=f reads f
//   node bench/launch.mjs --json out.json also writes every sample
//   node bench/launch.mjs --case startup  only that case (chain | independent | startup)
//   node bench/launch.mjs --case startup --against /tmp/main/bin/sflow.js
//                                         start-up of another build too, interleaved (e.g. main's)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { BIN, REPO, chain, independent, median, scratch, single } from './lib.mjs';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const jsonOut = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
const onlyCase = argv.includes('--case') ? argv[argv.indexOf('--case') + 1] : undefined;
const against = argv.includes('--against') ? argv[argv.indexOf('--against') + 1] : undefined;
const RUNS = Number(process.env.RUNS ?? (QUICK ? 3 : 5));
const N = Number(process.env.N ?? (QUICK ? 50 : 200));
const root = scratch('sflow-bench-launch-');
const recipes = {
  chain: chain(root, N),
  independent: independent(root, N),
  hello: single(root, 'hello', 'echo hello'),
};
const snakemake = !QUICK && spawnSync('snakemake', ['--version'], { stdio: 'ignore' }).status === 0;
const TICK = 100; // USER_HZ on Linux

/** CPU seconds of this process's reaped descendants (cutime + cstime of /proc/self/stat). */
function childCpu() {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / TICK;
}

let seq = 0;
function measure(cmd, args, { env = {}, cwd } = {}) {
  const dir = cwd ?? join(root, `w${++seq}`);
  mkdirSync(dir, { recursive: true });
  const c0 = childCpu();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', SFLOW_RUN_INDEX_DIR: join(root, 'index'), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = childCpu() - c0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  if (!cwd) rmSync(dir, { recursive: true, force: true });
  return { wall, cpu };
}

const NODE_LOOP = (n, width) => `
const { spawn } = require('child_process');
let next = 0;
const one = () => new Promise((r) => spawn('bash', ['-c', 'true'], { detached: true, stdio: 'ignore' }).on('exit', r));
const worker = async () => { while (next < ${n}) { next++; await one(); } };
Promise.all(Array.from({ length: ${width} }, worker));`;

const sflowRun =
  (recipe, launcher, bin = BIN) =>
  () =>
    measure(process.execPath, [bin, 'run', '-f', recipe], {
      env: { SFLOW_LAUNCHER: launcher, SFLOW_TASK_OUTPUT: 'never' },
    });
/** The start-up contenders of one build (bin: its bin/sflow.js). */
const startup = (bin, label) => ({
  [`${label} --help`]: () => measure(process.execPath, [bin, '--help']),
  [`${label} --version`]: () => measure(process.execPath, [bin, '--version']),
  [`${label} run --dry-run, one-task hello`]: () =>
    measure(process.execPath, [bin, 'run', '--dry-run', '-f', recipes.hello]),
  [`${label} run, one-task hello`]: sflowRun(recipes.hello, '', bin),
});
const smk = (mode, jobs) => () =>
  measure('snakemake', [
    '-s',
    join(REPO, 'bench', 'Snakefile'),
    '--config',
    `n=${N}`,
    `mode=${mode}`,
    '--quiet',
    'all',
    ...jobs,
  ]);

const bashFloor = () => measure('bash', ['-c', `for i in $(seq ${N}); do bash -c true; done`]);
const contenders = {
  chain: {
    'bash floor (sequential bash -c true)': bashFloor,
    'bare Node spawn loop': () => measure(process.execPath, ['-e', NODE_LOOP(N, 1)]),
    'sflow, perl launcher': sflowRun(recipes.chain, 'perl'),
    ...(QUICK
      ? {}
      : {
          'sflow, node launcher': sflowRun(recipes.chain, 'node'),
          'sflow, inline spawn': sflowRun(recipes.chain, 'inline'),
        }),
    ...(snakemake ? { 'Snakemake 7, -j1': smk('chain', ['-j1']) } : {}),
  },
  independent: {
    'bash floor (sequential bash -c true)': bashFloor,
    'bash, 2 at a time (xargs -P2)': () => measure('bash', ['-c', `seq ${N} | xargs -P2 -I{} bash -c true`]),
    'bare Node spawn loop, 2 at a time': () => measure(process.execPath, ['-e', NODE_LOOP(N, 2)]),
    'sflow, perl launcher': sflowRun(recipes.independent, 'perl'),
    ...(QUICK
      ? {}
      : {
          'sflow, node launcher': sflowRun(recipes.independent, 'node'),
          'sflow, inline spawn': sflowRun(recipes.independent, 'inline'),
        }),
    ...(snakemake
      ? { 'Snakemake 7, --scheduler greedy -j2': smk('independent', ['--scheduler', 'greedy', '-j2']) }
      : {}),
  },
  startup: {
    'node -e 0': () => measure(process.execPath, ['-e', '0']),
    ...startup(BIN, 'sflow'),
    ...(against ? startup(against, `against: sflow`) : {}),
  },
};

/** one measurement: RUNS interleaved rounds of the contenders (of `only`, when given) after a warm-up */
function collect(only) {
  const samples = {};
  for (let round = 0; round < RUNS + 1; round++) {
    for (const [c, list] of Object.entries(contenders)) {
      if (onlyCase && c !== onlyCase) continue;
      for (const [name, fn] of Object.entries(list)) {
        if (only && !only.has(`${c}: ${name}`) && !isFloor(name)) continue;
        const s = fn();
        if (round === 0) continue; // warm-up: page cache, compile caches
        ((samples[c] ??= {})[name] ??= []).push(s);
      }
    }
    process.stderr.write(`round ${round}/${RUNS} done\n`);
  }
  return samples;
}
const isFloor = (name) => name.startsWith('bash floor') || name === 'node -e 0';
const samples = collect();

const med = (xs, k) => median(xs.map((x) => x[k]));
/** the table of medians and ratios to each case's floor, printed; its rows returned */
function ratios(samples) {
  const rows = [];
  console.log(
    `\n${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, N = ${N}, ` +
      `median of ${RUNS} interleaved runs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
  );
  console.log('| case | contender | wall | CPU | wall ÷ bash floor | CPU ÷ bash floor |');
  console.log('|---|---|---|---|---|---|');
  for (const [c, byName] of Object.entries(samples)) {
    const floorName = c === 'startup' ? 'node -e 0' : 'bash floor (sequential bash -c true)';
    const fw = med(byName[floorName], 'wall');
    const fc = med(byName[floorName], 'cpu');
    for (const [name, xs] of Object.entries(byName)) {
      const w = med(xs, 'wall');
      const u = med(xs, 'cpu');
      rows.push({ case: c, name, wall: w, cpu: u, wallRatio: w / fw, cpuRatio: u / fc });
      console.log(
        `| ${c} | ${name} | ${w.toFixed(3)} s | ${u.toFixed(2)} s | ×${(w / fw).toFixed(2)} | ×${(u / fc).toFixed(2)} |`,
      );
    }
  }
  return rows;
}
const rows = ratios(samples);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ N, RUNS, load: os.loadavg(), rows, samples }, null, 1));

if (QUICK) {
  // a regression is a CPU-time ratio to the floor more than twice the recorded one: CPU time (of
  // the whole process tree) moves far less than wall time with the machine's load. A contender
  // over the line is measured once more, with its floor, and fails only if it is over again, so
  // one noisy minute on a shared machine does not fail CI.
  const file = process.env.BENCH_BASELINE ?? join(REPO, 'bench', 'quick-baseline.json');
  const base = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const over = (rs) =>
    rs.filter((r) => {
      const was = base[`${r.case}: ${r.name}`];
      return was !== undefined && !isFloor(r.name) && r.cpuRatio > 2 * was;
    });
  let bad = over(rows);
  if (bad.length) {
    const keys = new Set(bad.map((r) => `${r.case}: ${r.name}`));
    for (const k of keys) console.log(`over the line once, measuring again: ${k}`);
    const again = ratios(collect(keys));
    bad = over(again).filter((r) => keys.has(`${r.case}: ${r.name}`));
  }
  for (const r of bad)
    console.log(
      `REGRESSION ${r.case}: ${r.name}: CPU ×${r.cpuRatio.toFixed(2)} the floor, recorded ×${base[`${r.case}: ${r.name}`]}`,
    );
  if (process.env.BENCH_RECORD === '1') {
    const out = Object.fromEntries(rows.map((r) => [`${r.case}: ${r.name}`, Number(r.cpuRatio.toFixed(2))]));
    writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    console.log(`recorded ${file}`);
  }
  if (!bad.length) console.log('no launch-speed regression against bench/quick-baseline.json');
  process.exitCode = bad.length ? 1 : 0;
}
rmSync(root, { recursive: true, force: true });
