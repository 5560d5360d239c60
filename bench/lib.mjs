// Shared helpers for the benchmark scripts: recipe generation (the same recipes as the original
// tool's benchmark generator, plus larger variants) and timing of whole sflow commands.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(REPO, 'bin', 'sflow.js');
const HOOK = join(REPO, 'bench', 'rss-hook.mjs');

export function scratch(prefix = 'sflow-bench-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

function header(name) {
  return `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n`;
}

export function independent(dir, n, name = `indep${n}`) {
  let s = header(name);
  for (let i = 0; i < n; i++) s += `    - name: t${String(i).padStart(4, '0')}\n      script: [ "true" ]\n`;
  const f = join(dir, `${name}.yaml`);
  writeFileSync(f, s);
  return f;
}

export function chain(dir, n, name = `chain${n}`) {
  let s = header(name);
  for (let i = 0; i < n; i++) {
    s += `    - name: t${String(i).padStart(4, '0')}\n`;
    if (i) s += `      depends_on: [t${String(i - 1).padStart(4, '0')}]\n`;
    s += '      script: [ "true" ]\n';
  }
  const f = join(dir, `${name}.yaml`);
  writeFileSync(f, s);
  return f;
}

export function replicas(dir, n, name = `replicas${n}`) {
  const s =
    header(name) +
    `    - name: worker\n      replicas:\n        count: ${n}\n        policy: parallel\n      script:\n        - echo "I am replica $SFLOW_REPLICA_INDEX"\n`;
  const f = join(dir, `${name}.yaml`);
  writeFileSync(f, s);
  return f;
}

export function single(dir, name, cmd) {
  const f = join(dir, `${name}.yaml`);
  writeFileSync(f, header(name) + `    - name: out\n      script:\n        - ${cmd}\n`);
  return f;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Run `node bin/sflow.js ...args` `runs` times; returns medians of wall seconds and peak RSS MiB. */
export function timeSflow(args, { runs = 5, cwd, env = {} } = {}) {
  const walls = [];
  const rss = [];
  for (let i = 0; i < runs; i++) {
    const dir = scratch('sflow-bench-rss-');
    const rssFile = join(dir, 'rss');
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], {
      cwd: cwd ?? dir,
      env: { ...process.env, ...env, SFLOW_BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.status !== 0) throw new Error(`sflow ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    walls.push(wall);
    const kib = readFileSync(rssFile, 'utf8').trim().split('\n').map(Number);
    rss.push(Math.max(...kib) / 1024);
    rmSync(dir, { recursive: true, force: true });
  }
  return { wall: median(walls), rssMiB: median(rss), runs };
}

/** Time an arbitrary command (baseline), median wall seconds. */
export function timeCommand(file, args, { runs = 5 } = {}) {
  const walls = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(file, args, { stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${file} exited ${r.status}`);
    walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return median(walls);
}

export function fmt(x, digits = 3) {
  return Number(x).toFixed(digits);
}
