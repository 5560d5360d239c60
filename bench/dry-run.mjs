// `--dry-run` wall time, CPU time (user + system) and peak RSS: 1,000 independent tasks,
// 1 task × 1,000 replicas and 1 task × 10,000 replicas (issue 18 goal: 10,000 replicas in ≤ 1 s
// and < 120 MiB; the original: 5.2 s for 1,000 replicas). Stdout goes to /dev/null.
// Run: RUNS=5 node bench/dry-run.mjs
//      BASELINE=/tmp/main/bin/sflow.js RUNS=5 node bench/dry-run.mjs   (another build, interleaved)
// Rounds are interleaved (every case and contender once per round, after one warm-up round), so
// load on a shared machine hits all alike; medians; the load average is printed with the table.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BIN, REPO, fmt, independent, median, replicas, scratch } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 5);
const HOOK = join(REPO, 'bench', 'rss-hook.mjs');
const contenders = [['this build', BIN]];
if (process.env.BASELINE) contenders.push([`baseline (${process.env.BASELINE})`, process.env.BASELINE]);
const dir = scratch();
const cases = [
  ['1,000 independent tasks', independent(dir, 1000)],
  ['1 task × 1,000 replicas', replicas(dir, 1000)],
  ['1 task × 10,000 replicas', replicas(dir, 10000)],
];

/** CPU seconds of this process's reaped children (cutime + cstime of /proc/self/stat, USER_HZ 100) */
function childCpu() {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}

function once(bin, file) {
  const rssFile = join(dir, 'rss');
  rmSync(rssFile, { force: true });
  const c0 = childCpu();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', HOOK, bin, 'run', '-f', file, '--dry-run'], {
    cwd: dir,
    env: { ...process.env, SFLOW_BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = childCpu() - c0;
  if (r.status !== 0) throw new Error(`${bin} --dry-run ${file} exited ${r.status}: ${r.stderr}`);
  return { wall, cpu, rssMiB: Number(readFileSync(rssFile, 'utf8').trim()) / 1024 };
}

const load0 = loadavg()[0];
const samples = new Map();
for (let round = 0; round <= runs; round++) {
  for (const [label, file] of cases) {
    for (const [name, bin] of contenders) {
      const s = once(bin, file);
      if (round === 0) continue; // warm-up (file cache, compile cache)
      const key = `${label}\t${name}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(s);
    }
  }
}
console.log(`load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}; medians of ${runs} rounds`);
console.log('| case | contender | wall | CPU (user + sys) | peak RSS |');
console.log('|---|---|---|---|---|');
for (const [key, xs] of samples) {
  const [label, name] = key.split('\t');
  const m = (k) => median(xs.map((x) => x[k]));
  console.log(
    `| --dry-run, ${label} | ${name} | ${fmt(m('wall'))} s | ${fmt(m('cpu'), 2)} s | ${fmt(m('rssMiB'), 0)} MiB |`,
  );
}
rmSync(dir, { recursive: true, force: true });
