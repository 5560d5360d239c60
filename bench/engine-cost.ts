/**
 * Per-link engine cost (issue 18 goal: ≤ 0.5 ms beyond the launch): an N-link chain through
 * executePlan on a backend that launches nothing (bench/instant-backend.ts), with every file sink
 * (events.jsonl, sflow.log, summary, handle ledger, command log). Reports wall and CPU time per
 * link (CPU time: the figure to read on a shared machine), median of RUNS.
 *
 *   node --import ./test/fixtures/ts-loader/register.js bench/engine-cost.ts [N=2000] [RUNS=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { executePlan } from '../src/cli/run-execute.js';
import { prepareRunDir } from '../src/outputs/run-dir.js';
import { buildPlan, type SimpleTask } from '../test/integration/runtime-plan.js';
import { instantBackend } from './instant-backend.js';

const N = Number(process.argv[2] ?? 2000);
const RUNS = Number(process.argv[3] ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const root = mkdtempSync(join(os.tmpdir(), 'sflow-bench-engine-'));
const chain: SimpleTask[] = Array.from({ length: N }, (_, i) => ({
  name: `t${i}`,
  script: 'true',
  dependsOn: i ? [`t${i - 1}`] : [],
}));

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
interface Sample {
  wall: number;
  cpu: number;
  prepWall: number;
  prepCpu: number;
}

/** The whole run, and separately the run folder's preparation (a task folder and log per task). */
async function once(i: number): Promise<Sample> {
  const runDir = join(root, `run${i}`);
  const plan = buildPlan(runDir, chain);
  let c0 = process.cpuUsage();
  let t0 = performance.now();
  prepareRunDir(plan);
  const prepWall = performance.now() - t0;
  const prepCpu = cpuMs(process.cpuUsage(c0));
  rmSync(runDir, { recursive: true, force: true });
  c0 = process.cpuUsage();
  t0 = performance.now();
  const r = await executePlan(plan, {
    cwd: root,
    console: false,
    backendFactories: { local: () => instantBackend() },
  });
  const wall = performance.now() - t0;
  const cpu = cpuMs(process.cpuUsage(c0));
  if (r.exitCode !== 0) throw new Error(r.message);
  rmSync(runDir, { recursive: true, force: true });
  return { wall, cpu, prepWall, prepCpu };
}

await once(-1); // warm-up
const got: Sample[] = [];
for (let i = 0; i < RUNS; i++) got.push(await once(i));
const med = (k: keyof Sample) => median(got.map((g) => g[k])) / N;
console.log(
  `${N}-link chain on an instant backend, median of ${RUNS} (load ${os.loadavg()[0].toFixed(1)}):\n` +
    `  run folder (a folder + log per task): ${med('prepWall').toFixed(3)} ms/task wall, ${med('prepCpu').toFixed(3)} ms/task CPU\n` +
    `  engine per link, beyond that:         ${(med('wall') - med('prepWall')).toFixed(3)} ms wall, ${(med('cpu') - med('prepCpu')).toFixed(3)} ms CPU`,
);
rmSync(root, { recursive: true, force: true });
