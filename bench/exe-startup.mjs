// The single executable (dist/sflow-linux-x64, `npm run build:exe`) against the bundled CLI run by
// node (`node bin/sflow.js`, which loads dist/bundle/main.js): size, and median wall time of
// --version, --help, a dry-run and a local run of examples/hello.yaml. Runs are interleaved
// (exe, node, exe, node, …) so machine load hits both alike; the executable's one-time unpack
// happens before timing.   Run: RUNS=9 node bench/exe-startup.mjs  [SFLOW_EXE=/path/to/other/build]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, median, REPO, scratch } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 9);
const exe = process.env.SFLOW_EXE || join(REPO, 'dist', `sflow-linux-${process.arch}`); // SFLOW_EXE: another build
if (!existsSync(exe)) throw new Error(`${exe} is missing: npm run build && npm run build:exe`);
const dir = scratch('sflow-bench-exe-');
copyFileSync(join(REPO, 'examples', 'hello.yaml'), join(dir, 'hello.yaml'));
const env = { ...process.env, SFLOW_CACHE_DIR: join(dir, 'cache') };

function once(file, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const cases = [
  ['--version', ['--version']],
  ['--help', ['--help']],
  ['run --dry-run hello', ['run', '-f', 'hello.yaml', '--dry-run']],
  ['run hello (local)', ['run', '-f', 'hello.yaml']],
];
// bin/sflow.js is the npm entry: it imports dist/bundle/main.js and calls main(process.argv)
const nodeArgs = (args) => [join(REPO, 'bin', 'sflow.js'), ...args];
once(exe, ['--version']); // unpack once
console.log(`| command | single executable | node bin/sflow.js → dist/bundle (node ${process.version}) |`);
console.log('|---|---|---|');
for (const [name, args] of cases) {
  const a = [];
  const b = [];
  for (let i = 0; i < runs; i++) {
    a.push(once(exe, args));
    b.push(once(process.execPath, nodeArgs(args)));
  }
  console.log(`| ${name} | ${fmt(median(a))} s | ${fmt(median(b))} s |`);
}
console.log(
  `\nsize: ${(statSync(exe).size / 1e6).toFixed(1)} MB (node binary: ${(statSync(process.execPath).size / 1e6).toFixed(1)} MB); runs: ${runs}`,
);
rmSync(dir, { recursive: true, force: true });
