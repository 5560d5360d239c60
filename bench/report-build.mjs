// Time to build report.html from a run's ledger (goal: < 1 s for a 10,000-task events.jsonl).
// The ledgers are synthetic but shaped like real ones: a sweep of N replicas behind a service
// (readiness probe checks), every replica parsing a result, 1 % of them retried once and one
// failed with its log; the build is what `sflow run` does at the end and `sflow report` does:
// read events.jsonl, results.json and the failed logs, render, write atomically.
// Prints wall and CPU time (user + system of this process; on a shared machine the wall time
// mostly measures the other processes). Run: npm run build && RUNS=5 node bench/report-build.mjs
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, fmt, scratch } from './lib.mjs';

const { writeRunReport } = await import(join(REPO, 'dist', 'report', 'load.js'));
const runs = Number(process.env.RUNS ?? 5);

function info(name, runDir, extra = {}) {
  return {
    name,
    base: name,
    backend: 'local',
    dependsOn: [],
    service: false,
    probes: [],
    retries: null,
    nodes: ['localhost'],
    gpus: null,
    logPath: join(runDir, name, `${name}.log`),
    outputDir: join(runDir, name),
    ...extra,
  };
}

/** events.jsonl (and the failed task's log) of an n-replica sweep behind one service. */
function writeLedger(runDir, n) {
  const t0 = 1_767_225_600_000;
  const tasks = [
    info('server', runDir, {
      service: true,
      gpus: [0, 1],
      probes: [{ role: 'readiness', kind: 'http_get', target: 'http_get http://127.0.0.1:8000/health' }],
    }),
  ];
  for (let i = 0; i < n; i++)
    tasks.push(
      info(`bench_${i}`, runDir, {
        base: 'bench',
        dependsOn: ['server'],
        gpus: [i % 8],
        replica: {
          index: i,
          count: n,
          sequential: false,
          sweep: { CONC: String(2 ** (i % 8)), ISL: String(128 * (1 + (i % 4))) },
        },
      }),
    );
  const ev = [
    {
      t: t0,
      type: 'run_started',
      workflow: 'bench',
      runId: 'bench-1',
      runDir,
      tasks: tasks.map((t) => t.name),
    },
    {
      t: t0,
      type: 'run_plan',
      tasks,
      backends: [
        { name: 'local', type: 'local', nodes: [{ name: 'localhost', ip: '127.0.0.1', numGpus: 8 }] },
      ],
    },
    { t: t0 + 1, type: 'task_submitted', task: 'server', attempt: 1 },
    { t: t0 + 5, type: 'task_started', task: 'server', attempt: 1, pid: 10 },
  ];
  for (let k = 0; k < 30; k++)
    ev.push({
      t: t0 + 100 * k,
      type: 'probe_result',
      task: 'server',
      role: 'readiness',
      kind: 'http_get',
      ok: k === 29,
      detail: k === 29 ? 'HTTP 200' : 'connection refused',
      target: 'http_get http://127.0.0.1:8000/health',
    });
  ev.push({ t: t0 + 2900, type: 'task_ready', task: 'server', attempt: 1, probe: 'http_get' });
  let t = t0 + 3000;
  for (let i = 0; i < n; i++) {
    const task = `bench_${i}`;
    t += 7;
    ev.push(
      { t, type: 'task_submitted', task, attempt: 1 },
      {
        t: t + 2,
        type: 'task_started',
        task,
        attempt: 1,
        pid: 100 + i,
        handle: { ids: { pid: 100 + i, gpus: String(i % 8) } },
      },
    );
    let attempt = 1;
    if (i % 100 === 7) {
      ev.push({
        t: t + 40,
        type: 'task_retry',
        task,
        attempt: 1,
        exitCode: 1,
        delayS: 0,
        nextAttempt: 2,
        total: 2,
      });
      ev.push(
        { t: t + 41, type: 'task_submitted', task, attempt: 2 },
        { t: t + 43, type: 'task_started', task, attempt: 2, pid: 100 + i },
      );
      attempt = 2;
    }
    const failed = i === n - 1;
    ev.push({
      t: t + 80,
      type: 'result_parsed',
      task,
      ok: true,
      values: { output_throughput: failed ? 0 : 1000 + (i % 97) * 3.5, ttft_ms: 20 + (i % 13), errors: 0 },
      errors: [],
      resultPath: join(runDir, task, 'result.json'),
      assertions: [
        {
          expr: '${{ result.output_throughput > 0 }}',
          ok: !failed,
          seen: { 'result.output_throughput': failed ? '0.0' : '1000.0' },
        },
      ],
    });
    ev.push({
      t: t + 81,
      type: 'task_finished',
      task,
      attempt,
      status: failed ? 'FAILED' : 'COMPLETED',
      exitCode: 0,
      ...(failed
        ? {
            reason: 'assertion failed: ${{ result.output_throughput > 0 }} with result.output_throughput=0.0',
          }
        : {}),
    });
  }
  ev.push({
    t: t + 200,
    type: 'task_stopped',
    task: 'server',
    attempt: 1,
    why: 'teardown',
    signals: ['SIGTERM'],
    elapsedMs: 30,
  });
  ev.push({
    t: t + 300,
    type: 'run_finished',
    status: 'FAILED',
    exitCode: 1,
    message: "Workflow 'bench' failed: 1 task(s) failed",
  });
  mkdirSync(join(runDir, `bench_${n - 1}`), { recursive: true });
  writeFileSync(
    join(runDir, `bench_${n - 1}`, `bench_${n - 1}.log`),
    Array.from({ length: 2000 }, (_, k) => `step ${k}: throughput 0.0`).join('\n') + '\n',
  );
  writeFileSync(join(runDir, 'events.jsonl'), ev.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return ev.length;
}

const dir = scratch('sflow-bench-report-');
try {
  for (const n of [1000, 10000]) {
    const runDir = join(dir, `run${n}`);
    mkdirSync(runDir);
    const events = writeLedger(runDir, n);
    const ledgerMiB = statSync(join(runDir, 'events.jsonl')).size / 2 ** 20;
    const wall = [];
    const cpu = [];
    for (let r = 0; r < runs; r++) {
      const c = process.cpuUsage();
      const s = performance.now();
      writeRunReport(runDir);
      wall.push((performance.now() - s) / 1000);
      const u = process.cpuUsage(c);
      cpu.push((u.user + u.system) / 1e6);
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const size = statSync(join(runDir, 'report.html')).size / 2 ** 20;
    console.log(
      `| report.html, ${n.toLocaleString('en')} tasks (${events.toLocaleString('en')} events, ${fmt(ledgerMiB, 1)} MiB ledger) | ${fmt(median(wall))} s wall, ${fmt(median(cpu))} s CPU (wall min ${fmt(Math.min(...wall))}) | ${fmt(size, 2)} MiB |`,
    );
  }
} finally {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(dir);
}
