// `--dry-run` time and peak RSS: 1,000 independent tasks, 1 task × 1,000 replicas and
// 1 task × 10,000 replicas (goals: ≤ 0.5 s for 1,000 replicas, ≤ 3 s for 10,000; the original:
// 5.2 s for 1,000 replicas). Run: node bench/dry-run.mjs
import { rmSync } from 'node:fs';
import { fmt, independent, replicas, scratch, timeSflow } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 5);
const dir = scratch();
const cases = [
  ['1,000 independent tasks', independent(dir, 1000)],
  ['1 task × 1,000 replicas', replicas(dir, 1000)],
  ['1 task × 10,000 replicas', replicas(dir, 10000)],
];
for (const [label, file] of cases) {
  const r = timeSflow(['run', '-f', file, '--dry-run'], { runs, cwd: dir });
  console.log(`| --dry-run, ${label} | ${fmt(r.wall)} s | ${fmt(r.rssMiB, 0)} MiB |`);
}
rmSync(dir, { recursive: true, force: true });
