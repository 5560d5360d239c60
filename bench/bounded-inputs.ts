// Time and peak RSS of every hostile input of issue 9 (test/fixtures/hostile/cases.ts) through
// the real CLI (`sflow run -f <case>.yaml --dry-run`): goal < 2 s and < 300 MB each, ending in a
// located error (or, for 5,000 chained variables, a plan). Median of RUNS (default 3).
// Run: node --import ./test/fixtures/ts-loader/register.js bench/bounded-inputs.ts
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOSTILE_CASES } from '../test/fixtures/hostile/cases.js';
// @ts-expect-error plain JavaScript helpers shared by the benchmark scripts
import { BIN, fmt, median, REPO, scratch } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 3);
const dir = scratch('sflow-bench-hostile-') as string;
console.log('| input | outcome | wall (median) | peak RSS |');
console.log('|---|---|---|---|');
try {
  for (const c of HOSTILE_CASES) {
    const file = join(dir, `${c.name}.yaml`);
    writeFileSync(file, c.yaml());
    const walls: number[] = [];
    const rss: number[] = [];
    let outcome = '';
    for (let i = 0; i < runs; i++) {
      const rssFile = join(dir, `${c.name}.rss`);
      rmSync(rssFile, { force: true });
      const t0 = process.hrtime.bigint();
      const r = spawnSync(
        process.execPath,
        ['--import', join(REPO, 'bench', 'rss-hook.mjs'), BIN, 'run', '-f', file, '--dry-run'],
        {
          cwd: dir,
          env: { ...process.env, ...c.env, SFLOW_BENCH_RSS_FILE: rssFile, NO_COLOR: '1' },
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
        },
      );
      walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
      rss.push(Number(readFileSync(rssFile, 'utf8').trim()) / 1024);
      const first = (r.stderr.split('\n').find((l) => l.startsWith('✗')) ?? '').replace(/^✗ [^:]+: /, '');
      outcome =
        r.status === 0 ? 'plan (exit 0)' : `exit ${r.status}: ${first.replace(dir + '/', '').slice(0, 90)}`;
    }
    console.log(`| ${c.name} | ${outcome} | ${fmt(median(walls), 2)} s | ${fmt(median(rss), 0)} MiB |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
