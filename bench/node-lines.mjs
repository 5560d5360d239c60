// Start-up of a one-task run on each way sflow ships, in one interleaved series (each round runs
// every command once, so machine load hits all alike): the single executable (Node 24 inside),
// `node bin/sflow.js` (the npm install's entry, loading dist/bundle/) on this machine's Node 20
// and on the pinned Node 24 with its compile cache warm and turned off, and `node -e 0` of both.
// Wall time: median. CPU (user + system of the child, from /proc/self/stat's cutime + cstime,
// 10 ms ticks): mean.
//
//   RUNS=11 node bench/node-lines.mjs      [NODE22=/path/to/node22: adds Node 22's columns]
//
// Needs `npm run build && npm run build:exe`; the Node 24 binary comes from scripts/node-dist.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fmt, median, REPO, scratch, single } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 11);
const exe = join(REPO, 'dist', `sflow-linux-${process.arch}`);
statSync(exe); // npm run build:exe first
const node24 = join(
  execFileSync(process.execPath, [join(REPO, 'scripts', 'node-dist.mjs'), 'bin'], {
    encoding: 'utf8',
  }).trim(),
  'node',
);
const dir = scratch('sflow-bench-lines-');
const hello = single(dir, 'hello', 'echo hello');
const base = { ...process.env, SFLOW_CACHE_DIR: join(dir, 'cache'), NO_COLOR: '1' };
delete base.NODE_COMPILE_CACHE;
const cache = (name) => ({ ...base, NODE_COMPILE_CACHE: join(dir, `cc-${name}`) });
const noCache = { ...base, NODE_DISABLE_COMPILE_CACHE: '1' };

const v = (node) => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const run = ['run', '-f', hello];
const cases = [
  ['single executable (Node 24 inside)', exe, run, base],
  [`sflow on Node ${v(process.execPath)}`, process.execPath, [BIN, ...run], base],
  [`sflow on Node ${v(node24)}, compile cache warm`, node24, [BIN, ...run], cache('24')],
  [`sflow on Node ${v(node24)}, NODE_DISABLE_COMPILE_CACHE=1`, node24, [BIN, ...run], noCache],
];
if (process.env.NODE22) {
  const n22 = process.env.NODE22;
  cases.push([`sflow on Node ${v(n22)}, compile cache warm`, n22, [BIN, ...run], cache('22')]);
  cases.push([`sflow on Node ${v(n22)}, NODE_DISABLE_COMPILE_CACHE=1`, n22, [BIN, ...run], noCache]);
  cases.push([`node -e 0 (Node ${v(n22)})`, n22, ['-e', '0'], base]);
}
cases.push([`node -e 0 (Node ${v(process.execPath)})`, process.execPath, ['-e', '0'], base]);
cases.push([`node -e 0 (Node ${v(node24)})`, node24, ['-e', '0'], base]);

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
/** CPU time of this process's reaped children so far, ms */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS; // cutime, cstime (fields 16, 17)
}

function once(file, args, env) {
  const c0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: childrenCpuMs() - c0 };
}

for (const [, file, args, env] of cases) once(file, args, env); // unpack the executable, fill the caches
const results = cases.map(() => ({ wall: [], cpu: [] }));
for (let i = 0; i < runs; i++)
  cases.forEach(([, file, args, env], j) => {
    const r = once(file, args, env);
    results[j].wall.push(r.wall);
    results[j].cpu.push(r.cpu);
  });
const ref = median(results[1].wall);
console.log(
  `| one-task \`sflow run\` (${runs} interleaved rounds) | wall, median | ÷ Node 20's sflow | CPU, mean |`,
);
console.log('|---|---|---|---|');
cases.forEach(([name], j) => {
  const w = median(results[j].wall);
  const cpu = results[j].cpu.reduce((a, b) => a + b, 0) / runs;
  console.log(`| ${name} | ${fmt(w)} s | ${(w / ref).toFixed(2)}× | ${cpu.toFixed(0)} ms |`);
});
rmSync(dir, { recursive: true, force: true });
