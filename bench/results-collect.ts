/**
 * `sflow results collect` over N run folders (issue 27: 1,000 in seconds; a second collect adds
 * nothing and takes a fraction of the first). The run folders are copies of one real run of the
 * stand-in serving sweep (4 task instances each: test/helpers/results-runs.ts). Each round: a
 * first collect into a fresh table folder, then a second over the same root; wall time, CPU time
 * (user + system of the child) and peak RSS (bench/rss-hook.mjs) of the built CLI. Medians of RUNS.
 *
 *   npm run build && node --import ./test/fixtures/ts-loader/register.js bench/results-collect.ts [N=1000] [RUNS=5]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { BIN, REPO } from '../test/helpers/cli.js';
import { generateRuns, templateRun } from '../test/helpers/results-runs.js';

const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 5);
const HOOK = join(REPO, 'bench', 'rss-hook.mjs');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const root = mkdtempSync(join(os.tmpdir(), 'sflow-bench-results-'));

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
  out: string;
}

function collect(table: string): Sample {
  const rssFile = join(root, 'rss.txt');
  rmSync(rssFile, { force: true });
  const t = performance.now();
  // /usr/bin/time reports the child's CPU; the hook its peak RSS
  const r = spawnSync(
    '/usr/bin/time',
    [
      '-f',
      '%U %S',
      process.execPath,
      '--import',
      HOOK,
      BIN,
      'results',
      'collect',
      join(root, 'runs'),
      '-d',
      table,
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, SFLOW_BENCH_RSS_FILE: rssFile },
    },
  );
  const wall = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`collect failed: ${r.stderr}`);
  const [user, sys] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  const rss = Math.max(...readFileSync(rssFile, 'utf8').trim().split('\n').map(Number));
  return { wall, cpu: user + sys, rssMiB: rss / 1024, out: r.stdout.trim() };
}

try {
  const template = templateRun(join(root, 'template'));
  const t = performance.now();
  generateRuns(template, join(root, 'runs'), { count: N, prefix: 'run', seed: 7, noise: 0.02 });
  console.log(
    `${N} run folders written in ${((performance.now() - t) / 1000).toFixed(1)} s (${os.loadavg()[0].toFixed(2)} load)`,
  );
  const first: Sample[] = [];
  const second: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    const table = join(root, `table-${i}`);
    first.push(collect(table));
    second.push(collect(table));
  }
  console.log(`first:  ${first[0].out}`);
  console.log(`second: ${second[0].out}`);
  const line = (name: string, s: Sample[]) =>
    `${name}: wall ${median(s.map((x) => x.wall)).toFixed(3)} s, CPU ${median(s.map((x) => x.cpu)).toFixed(2)} s, peak RSS ${median(s.map((x) => x.rssMiB)).toFixed(0)} MiB`;
  console.log(line('first collect ', first));
  console.log(line('second collect', second));
  console.log(
    `second / first: wall ×${(median(second.map((x) => x.wall)) / median(first.map((x) => x.wall))).toFixed(2)}, CPU ×${(median(second.map((x) => x.cpu)) / median(first.map((x) => x.cpu))).toFixed(2)} (load ${os.loadavg()[0].toFixed(2)})`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
