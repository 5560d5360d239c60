/**
 * Run-engine overhead: hand-built Plans straight through executePlan (no YAML, no CLI).
 *
 * Run (no build needed; Node 20):
 *   node --import ./test/fixtures/ts-loader/register.js bench/run-overhead.ts [N] [RUNS]
 * Defaults: N = 1000 tasks, RUNS = 5. Prints medians and writes nothing outside $TMPDIR.
 *
 * Cases:
 *   baseline   N × `bash -c true` run one after another with spawnSync (the floor)
 *   indep      N independent `true` tasks
 *   chain      an N-task chain (each depends on the previous)
 *   engine     the same chain on an instant in-memory backend: the orchestrator and every
 *              sink (events.jsonl, sflow.log, summary, command log) without any process
 *   readiness  a service opens a TCP port 0.3 s after start (probe interval 1 s);
 *              "check→submit" is the time from the passing readiness check to the decision to
 *              start the dependent, "check→started" until its process runs, "open→started"
 *              from the port opening until then (bounded by the probe interval).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { executePlan } from '../src/cli/run-execute.js';
import { buildPlan, type SimpleTask } from '../test/integration/runtime-plan.js';
import { instantBackend } from './instant-backend.js';

const N = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const root = mkdtempSync(join(os.tmpdir(), 'sflow-bench-run-'));
let seq = 0;

async function timePlan(tasks: SimpleTask[], instant = false): Promise<number> {
  const runDir = join(root, `run${++seq}`);
  const plan = buildPlan(runDir, tasks);
  const t0 = performance.now();
  const r = await executePlan(plan, {
    cwd: root,
    console: false,
    backendFactories: instant ? { local: () => instantBackend() } : undefined,
  });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.message}`);
  rmSync(runDir, { recursive: true, force: true });
  return ms;
}

function baseline(): number {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) spawnSync('bash', ['-c', 'true'], { stdio: 'ignore' });
  return performance.now() - t0;
}

const indep = (): SimpleTask[] => Array.from({ length: N }, (_, i) => ({ name: `t${i}`, script: 'true' }));
const chain = (): SimpleTask[] =>
  Array.from({ length: N }, (_, i) => ({ name: `t${i}`, script: 'true', dependsOn: i ? [`t${i - 1}`] : [] }));

async function readiness(): Promise<{ checkToSubmit: number; checkToStart: number; openToStart: number }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const runDir = join(root, `run${++seq}`);
  let readyAt = 0;
  let submitAt = 0;
  let clientAt = 0;
  const plan = buildPlan(runDir, [
    {
      name: 'server',
      script: `exec python3 -c "import socket,time,os; time.sleep(0.3); s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', ${port})); s.listen(); open(os.environ['SFLOW_TASK_OUTPUT_DIR']+'/opened','w').write(repr(time.time())); time.sleep(60)"`,
      readiness: [{ kind: 'tcp_port', port, intervalS: 1, timeoutS: 30 }],
    },
    { name: 'client', dependsOn: ['server'], script: 'true' },
  ]);
  const r = await executePlan(plan, {
    cwd: root,
    console: false,
    onEvent: (e) => {
      if (e.type === 'task_ready') readyAt = e.t;
      if (e.type === 'task_submitted' && e.task === 'client') submitAt = e.t;
      if (e.type === 'task_started' && e.task === 'client') clientAt = e.t;
    },
  });
  if (r.exitCode !== 0) throw new Error(r.message);
  const opened = Number(readFileSync(join(runDir, 'server', 'opened'), 'utf8')) * 1000;
  rmSync(runDir, { recursive: true, force: true });
  return {
    checkToSubmit: submitAt - readyAt,
    checkToStart: clientAt - readyAt,
    openToStart: clientAt - opened,
  };
}

async function main() {
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
  console.log(`N = ${N}, median of ${RUNS} runs (after one warm-up)\n`);
  await timePlan(indep().slice(0, 50)); // warm-up
  const b: number[] = [];
  const ind: number[] = [];
  const ch: number[] = [];
  const eng: number[] = [];
  const rd: Array<{ checkToSubmit: number; checkToStart: number; openToStart: number }> = [];
  for (let i = 0; i < RUNS; i++) {
    b.push(baseline());
    ind.push(await timePlan(indep()));
    ch.push(await timePlan(chain()));
    eng.push(await timePlan(chain(), true));
    rd.push(await readiness());
  }
  const base = median(b);
  const row = (name: string, ms: number) =>
    console.log(
      `${name.padEnd(34)} ${(ms / 1000).toFixed(3).padStart(7)} s   ${(ms / N).toFixed(2).padStart(6)} ms/task   overhead vs baseline ${((ms - base) / N).toFixed(2)} ms/task`,
    );
  row(`baseline: ${N} × bash -c true`, base);
  row(`executePlan: ${N} independent`, median(ind));
  row(`executePlan: ${N}-task chain`, median(ch));
  console.log(
    `engine only: ${N}-task chain, no processes   ${(median(eng) / 1000).toFixed(3)} s   ${(median(eng) / N).toFixed(3)} ms/link`,
  );
  const med = (k: 'checkToSubmit' | 'checkToStart' | 'openToStart') => median(rd.map((r) => r[k])).toFixed(1);
  const worst = Math.max(...rd.map((r) => r.openToStart)).toFixed(0);
  console.log(
    `readiness (interval 1 s): check→submit ${med('checkToSubmit')} ms, check→started ${med('checkToStart')} ms, ` +
      `port open→started ${med('openToStart')} ms (worst ${worst} ms)`,
  );
  rmSync(root, { recursive: true, force: true });
}

await main();
