/* global process, console, performance */
// The README's quick start from a fresh clone, timed: `git clone` → `npm ci` (installs and builds
// dist/ once) → the first `npx sflow run -f examples/hello.yaml`, until the first task's output
// line appears. Also checks that this first `npx sflow` did not rebuild (dist/.build-stamp is
// unchanged; npx links the checkout into npm's cache and runs its `prepare`, which now skips a
// fresh build). Clones the committed HEAD of this repository into a temp folder, removed after.
// npm's package cache is used as it is (an offline-capable cache makes `npm ci` fast on a second
// machine run; the figure reported is what a user with a warm npm cache sees).
// Run:  node bench/first-run.mjs [repo path]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './lib.mjs';

const source = process.argv[2] ?? REPO;
const dir = mkdtempSync(join(tmpdir(), 'sflow-first-run-'));
const clone = join(dir, 'sflow');
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

function step(name, cmd, args, cwd) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return performance.now() - t0;
}

/** ms until the first `[task] …` output line of the run, and the run's total time */
function firstTaskOutput() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('npx', ['sflow', 'run', '-f', 'examples/hello.yaml'], {
      cwd: clone,
      env: { ...process.env, SFLOW_TASK_OUTPUT: 'always', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let first;
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      if (first === undefined && /^\[\w+\] /m.test(out)) first = performance.now() - t0;
    });
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', (code) =>
      code === 0 && first !== undefined
        ? resolve({ first, total: performance.now() - t0 })
        : reject(new Error(`npx sflow run exited ${code}:\n${out}`)),
    );
  });
}

try {
  const tClone = step('git clone', 'git', ['clone', '-q', source, clone], dir);
  const tCi = step('npm ci', 'npm', ['ci', '--no-audit', '--no-fund'], clone);
  const stamp = statSync(join(clone, 'dist', '.build-stamp')).mtimeMs;
  const run = await firstTaskOutput();
  const rebuilt = statSync(join(clone, 'dist', '.build-stamp')).mtimeMs !== stamp;
  console.log('| step | time |');
  console.log('|---|---|');
  console.log(`| git clone | ${s(tClone)} |`);
  console.log(`| npm ci (install + build dist/) | ${s(tCi)} |`);
  console.log(`| first \`npx sflow run -f examples/hello.yaml\`: first task output | ${s(run.first)} |`);
  console.log(`| … run finished | ${s(run.total)} |`);
  console.log(`| clone → first task output | ${s(tClone + tCi + run.first)} |`);
  console.log(`\nfirst npx call rebuilt dist/: ${rebuilt ? 'YES (regression)' : 'no'}`);
  if (rebuilt) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
  // the link npx made for this clone in npm's cache
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  const npx = join(cache, '_npx');
  for (const e of existsSync(npx) ? readdirSync(npx) : []) {
    const pkg = join(npx, e, 'package.json');
    if (existsSync(pkg) && readFileSync(pkg, 'utf8').includes(dir))
      rmSync(join(npx, e), { recursive: true, force: true });
  }
}
