/* global process, console, performance, setTimeout */
// `sflow run` end to end on the benchmark recipes (BENCHMARKS.md): hello world, 200 independent
// `true` tasks, a 200-task chain (and 1000 of each), against running the same work without sflow,
// plus Ctrl-C on a multi-line script (time to exit, exit code, leftover processes).
// Run (after npm install / npm run build):  node bench/run-cli.js        RUNS=5 by default
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, chain, fmt, independent, median, scratch, single, timeCommand, timeSflow } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 5);
const dir = scratch();
const row = (name, r, base) =>
  console.log(
    `| ${name} | ${fmt(r.wall)} s | ${fmt(r.rssMiB, 0)} MiB | ${base === undefined ? '' : `${fmt(base)} s (×${fmt(r.wall / base, 1)})`} |`,
  );

const bashLoop = (n) => timeCommand('bash', ['-c', `for i in $(seq ${n}); do bash -c true; done`], { runs });

console.log('| case | sflow run (median) | peak RSS | same work without sflow |');
console.log('|---|---|---|---|');
row(
  'hello world (1 task)',
  timeSflow(['run', '-f', single(dir, 'hello', 'echo hello')], { runs }),
  bashLoop(1),
);
for (const n of [200, 1000]) {
  const base = bashLoop(n);
  row(`${n} independent \`true\``, timeSflow(['run', '-f', independent(dir, n)], { runs }), base);
  row(`${n}-task chain`, timeSflow(['run', '-f', chain(dir, n)], { runs }), base);
}

/** pids of live processes whose command line contains `marker` */
function processesWith(marker) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (!/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)))
        out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function ctrlC() {
  const marker = `${300}.${Date.now() % 1e6}`;
  const f = join(dir, 'sigint.yaml');
  writeFileSync(
    f,
    `version: "0.1"\nworkflow:\n  name: sigint_multiline\n  tasks:\n    - name: sleeper\n      script:\n        - echo started\n        - sleep ${marker} &\n        - sleep ${marker}\n        - echo done\n`,
  );
  const child = spawn(process.execPath, [BIN, 'run', '-f', f], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', (code) => r({ code, at: performance.now() })));
  while (processesWith(marker).length < 2) await new Promise((r) => setTimeout(r, 20));
  const t0 = performance.now();
  child.kill('SIGINT');
  const { code, at } = await exited;
  let goneAt;
  while (processesWith(marker).length > 0 && performance.now() - t0 < 10_000)
    await new Promise((r) => setTimeout(r, 10));
  goneAt = Math.max(at, performance.now());
  return {
    exitMs: at - t0,
    goneMs: goneAt - t0,
    code,
    left: processesWith(marker).length,
    traceback: /\n\s+at /.test(out),
  };
}

const c = [];
for (let i = 0; i < runs; i++) c.push(await ctrlC());
console.log(
  `| Ctrl-C, multi-line script | exit ${c[0].code} after ${fmt(median(c.map((x) => x.exitMs)) / 1000)} s | processes left: ${Math.max(...c.map((x) => x.left))} | traceback: ${c.some((x) => x.traceback) ? 'yes' : 'no'} |`,
);
