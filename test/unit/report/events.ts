/** Small hand-written ledgers for the report's unit tests. */
import type { PlanTaskInfo, RunEvent, TaskHandle } from '../../../src/events/events.js';
import { HANDLE_VERSION } from '../../../src/events/handle.js';

/** A local task handle as a task_started event carries it (backend contract v2). */
function taskHandle(task: string, attempt: number, extra: Partial<TaskHandle> = {}): TaskHandle {
  return {
    v: HANDLE_VERSION,
    backend: 'local',
    type: 'local',
    runId: 'r1',
    task,
    attempt,
    state: 'RUNNING',
    nodes: ['localhost'],
    process: { pid: 1, pgid: 1, host: 'localhost' },
    engine: { kind: 'local' },
    remoteIds: [],
    submittedAt: new Date(0).toISOString(),
    logPath: `/nonexistent/run/${task}/${task}.log`,
    ...extra,
  };
}

export function info(name: string, extra: Partial<PlanTaskInfo> = {}): PlanTaskInfo {
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
    logPath: `/nonexistent/run/${name}/${name}.log`,
    outputDir: `/nonexistent/run/${name}`,
    ...extra,
  };
}

const T0 = 1_700_000_000_000;

/**
 * A run with: `server` (service, ready at +1 s, stopped by teardown), `flaky` (fails once, then
 * completes), `bench_<c>` sweep replicas with results (one fails an assertion), `after` (cancelled
 * before it started).
 */
export function mixedRun(): RunEvent[] {
  const tasks: PlanTaskInfo[] = [
    info('server', {
      service: true,
      gpus: [0, 1],
      probes: [{ role: 'readiness', kind: 'tcp_port', target: 'tcp_port 127.0.0.1:8000' }],
    }),
    info('flaky', { retries: { count: 2, intervalS: 0, backoff: 1 } }),
    ...[1, 2].map((c, i) =>
      info(`bench_${c}`, {
        base: 'bench',
        dependsOn: ['server'],
        replica: { index: i, count: 2, sequential: false, sweep: { CONC: String(c), MODE: 'x<y>' } },
      }),
    ),
    info('after', { dependsOn: ['bench_1', 'bench_2'] }),
  ];
  const e: RunEvent[] = [
    {
      t: T0,
      type: 'run_started',
      workflow: 'demo',
      runId: 'demo-1',
      runDir: '/nonexistent/run',
      tasks: tasks.map((t) => t.name),
    },
    {
      t: T0,
      type: 'run_plan',
      tasks,
      backends: [
        { name: 'local', type: 'local', nodes: [{ name: 'localhost', ip: '127.0.0.1', numGpus: 2 }] },
      ],
    },
    { t: T0 + 10, type: 'task_submitted', task: 'server', attempt: 1 },
    {
      t: T0 + 20,
      type: 'task_started',
      task: 'server',
      attempt: 1,
      pid: 1,
      handle: taskHandle('server', 1, { gpus: { indices: [0, 1], uuids: [] } }),
    },
    { t: T0 + 10, type: 'task_submitted', task: 'flaky', attempt: 1 },
    { t: T0 + 30, type: 'task_started', task: 'flaky', attempt: 1 },
    {
      t: T0 + 500,
      type: 'probe_result',
      task: 'server',
      role: 'readiness',
      kind: 'tcp_port',
      ok: false,
      detail: 'refused',
      target: 'tcp_port 127.0.0.1:8000',
    },
    {
      t: T0 + 600,
      type: 'task_retry',
      task: 'flaky',
      attempt: 1,
      exitCode: 3,
      delayS: 0,
      nextAttempt: 2,
      total: 3,
    },
    { t: T0 + 610, type: 'task_submitted', task: 'flaky', attempt: 2 },
    { t: T0 + 620, type: 'task_started', task: 'flaky', attempt: 2 },
    { t: T0 + 900, type: 'task_finished', task: 'flaky', attempt: 2, status: 'COMPLETED', exitCode: 0 },
    {
      t: T0 + 1000,
      type: 'probe_result',
      task: 'server',
      role: 'readiness',
      kind: 'tcp_port',
      ok: true,
      detail: 'open',
      target: 'tcp_port 127.0.0.1:8000',
    },
    { t: T0 + 1000, type: 'task_ready', task: 'server', attempt: 1, probe: 'tcp_port' },
  ];
  [1, 2].forEach((c) => {
    const task = `bench_${c}`;
    e.push(
      { t: T0 + 1010, type: 'task_submitted', task, attempt: 1 },
      { t: T0 + 1020, type: 'task_started', task, attempt: 1 },
      {
        t: T0 + 1500 + c,
        type: 'result_parsed',
        task,
        ok: true,
        values: { tput: c === 1 ? 0 : 12.5, unit_less: 'a&b' },
        errors: [],
        resultPath: `/nonexistent/run/${task}/result.json`,
        assertions: [
          { expr: '${{ result.tput > 0 }}', ok: c !== 1, seen: { 'result.tput': c === 1 ? '0' : '12.5' } },
        ],
      },
      c === 1
        ? {
            t: T0 + 1500 + c,
            type: 'task_finished',
            task,
            attempt: 1,
            status: 'FAILED',
            exitCode: 0,
            reason: 'assertion failed: ${{ result.tput > 0 }} with result.tput=0',
          }
        : {
            t: T0 + 1500 + c,
            type: 'task_finished',
            task,
            attempt: 1,
            status: 'CANCELLED',
            exitCode: null,
            reason: 'cancelled by fail-fast',
          },
    );
  });
  e.push(
    {
      t: T0 + 1501,
      type: 'fail_fast',
      message: 'Fail-fast: result assertion failed: bench_1. Cancelling remaining tasks.',
    },
    {
      t: T0 + 1502,
      type: 'task_finished',
      task: 'after',
      attempt: 0,
      status: 'CANCELLED',
      exitCode: null,
      reason: 'cancelled by fail-fast',
    },
    {
      t: T0 + 1600,
      type: 'task_stopped',
      task: 'server',
      attempt: 1,
      why: 'teardown',
      signals: ['SIGTERM'],
      elapsedMs: 20,
    },
    {
      t: T0 + 1700,
      type: 'run_finished',
      status: 'FAILED',
      exitCode: 1,
      message: "Workflow 'demo' failed: 1 task(s) failed (bench_1)",
    },
  );
  return e;
}
