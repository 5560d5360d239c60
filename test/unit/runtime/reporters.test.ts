import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/events/events.js';
import { SummaryModel } from '../../../src/reporters/summary-model.js';
import { renderSummary } from '../../../src/reporters/summary-render.js';
import { SflowLogSink, logLinesFor } from '../../../src/reporters/sflow-log.js';
import { ConsoleReporter } from '../../../src/reporters/console.js';
import { EventsJsonlSink, parseEventsJsonl } from '../../../src/reporters/events-jsonl.js';
import { elapsed, isoLocal, seconds, timedelta } from '../../../src/reporters/format.js';
import { failFastMessage } from '../../../src/runtime/messages.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-rep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
const at = (ms: number) => T0 + ms;

/** a run: server READY then failure probe, bench cancelled, never_runs never started */
const events: RunEvent[] = [
  {
    t: at(0),
    type: 'run_started',
    workflow: 'fp',
    runId: 'fp-1',
    runDir: '/out/fp-1',
    tasks: ['server', 'bench', 'never_runs'],
  },
  {
    t: at(1),
    type: 'run_plan',
    tasks: [
      {
        name: 'server',
        base: 'server',
        backend: 'local',
        dependsOn: [],
        service: true,
        probes: [
          { role: 'readiness', kind: 'log_watch', target: 'log_watch "up"' },
          { role: 'failure', kind: 'log_watch', target: 'log_watch "Traceback"' },
        ],
        retries: null,
        nodes: ['localhost'],
        gpus: [0, 1],
        logPath: '/out/fp-1/server/server.log',
        outputDir: '/out/fp-1/server',
      },
      {
        name: 'bench',
        base: 'bench',
        backend: 'local',
        dependsOn: ['server'],
        service: false,
        probes: [],
        retries: null,
        nodes: ['localhost'],
        gpus: null,
        logPath: '/out/fp-1/bench/bench.log',
        outputDir: '/out/fp-1/bench',
      },
      {
        name: 'never_runs',
        base: 'never_runs',
        backend: 'local',
        dependsOn: ['bench', 'server'],
        service: false,
        probes: [],
        retries: null,
        nodes: ['localhost'],
        gpus: null,
        logPath: '/out/fp-1/never_runs/never_runs.log',
        outputDir: '/out/fp-1/never_runs',
      },
    ],
    backends: [
      {
        name: 'local',
        type: 'local',
        synthetic: true,
        nodes: [{ name: 'localhost', ip: '127.0.0.1', numGpus: null }],
      },
    ],
    commandLogs: [{ family: 'bash', path: '/out/fp-1/bash_cmds.log' }],
  },
  { t: at(10), type: 'task_submitted', task: 'server', attempt: 1 },
  { t: at(12), type: 'task_started', task: 'server', attempt: 1, pid: 42 },
  {
    t: at(500),
    type: 'probe_result',
    task: 'server',
    role: 'readiness',
    kind: 'log_watch',
    ok: true,
    detail: '1/1 matches',
  },
  { t: at(501), type: 'task_ready', task: 'server', attempt: 1, probe: 'log_watch "up"' },
  { t: at(502), type: 'task_submitted', task: 'bench', attempt: 1 },
  { t: at(505), type: 'task_started', task: 'bench', attempt: 1, pid: 43 },
  {
    t: at(900),
    type: 'probe_result',
    task: 'server',
    role: 'failure',
    kind: 'log_watch',
    ok: true,
    detail: '0/1 matches',
  },
  {
    t: at(1000),
    type: 'probe_result',
    task: 'server',
    role: 'failure',
    kind: 'log_watch',
    ok: false,
    detail: '1/1 matches',
  },
  {
    t: at(1001),
    type: 'task_finished',
    task: 'server',
    attempt: 1,
    status: 'FAILED',
    exitCode: null,
    signal: null,
    reason: 'failure probe terminated: x',
  },
  {
    t: at(1002),
    type: 'fail_fast',
    message: 'Fail-fast: failure probe terminated: server. Cancelling remaining tasks.',
  },
  {
    t: at(1003),
    type: 'task_finished',
    task: 'bench',
    attempt: 1,
    status: 'CANCELLED',
    exitCode: null,
    signal: null,
    reason: 'cancelled by fail-fast (server failed)',
  },
  {
    t: at(1003),
    type: 'task_finished',
    task: 'never_runs',
    attempt: 0,
    status: 'CANCELLED',
    exitCode: null,
    signal: null,
    reason: 'cancelled by fail-fast (server failed)',
  },
  {
    t: at(1100),
    type: 'task_stopped',
    task: 'server',
    attempt: 1,
    why: 'fail_fast',
    signals: ['SIGTERM'],
    elapsedMs: 90,
  },
  {
    t: at(1200),
    type: 'run_finished',
    status: 'FAILED',
    exitCode: 1,
    message: "Workflow 'fp' failed: 1 task(s) failed (server)",
  },
];

describe('format helpers', () => {
  it('formats durations and times', () => {
    expect(seconds(9017)).toBe('9.017s');
    expect(elapsed(1001)).toBe('+01.001s');
    expect(elapsed(61_500)).toBe('+1m01.500s');
    expect(timedelta(9017)).toBe('0:00:09.017000');
    expect(timedelta(3_600_000)).toBe('1:00:00');
    expect(isoLocal(T0)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.006[+-]\d\d:\d\d$/);
  });
  it('fail-fast line names only the causes that apply', () => {
    expect(
      failFastMessage([
        { name: 'a', kind: 'exit' },
        { name: 'b', kind: 'failure_probe' },
        { name: 'c', kind: 'exit' },
      ]),
    ).toBe(
      'Fail-fast: failure probe terminated: b; process exited with error: a, c. Cancelling remaining tasks.',
    );
  });
  it('names the finalize kinds: a failed assertion, a failed upload', () => {
    expect(
      failFastMessage([
        { name: 'up', kind: 'upload' },
        { name: 'bench', kind: 'assertion' },
      ]),
    ).toBe('Fail-fast: result assertion failed: bench; upload failed: up. Cancelling remaining tasks.');
  });
});

describe('summary from events only', () => {
  const m = new SummaryModel();
  for (const e of events) m.apply(e);
  const text = renderSummary(m, { summaryPath: '/out/fp-1/sflow_summary.log' });
  const sections = text.split('\n\n').map((s) => s.split('\n')[0]);

  it('has every section in order', () => {
    expect(sections).toEqual([
      'Sflow Summary',
      'Tasks',
      'Task Duration Chart',
      'Timeline',
      'Probe Traces (last attempt)',
      'GPU Assignment',
      'Node Topology',
      'External Command Health',
      'Command Logs',
      'Dependencies',
      'Failure Hints',
    ]);
  });

  it('header block', () => {
    expect(text).toContain('Status   : FAILED\n');
    expect(text).toContain('Duration : 1.200s\n');
    expect(text).toContain('Output   : /out/fp-1\n');
    expect(text).toContain('Tasks    : 3\n');
    expect(text).toContain('Counts   : CANCELLED=2 FAILED=1\n');
  });

  it('task table, chart, timeline, probes, dependencies, hints', () => {
    expect(text).toMatch(/server +FAILED +1 +0\.989s +- +failure probe terminated: x/);
    expect(text).toMatch(/never_runs +CANCELLED +0 +- +- +cancelled by fail-fast/);
    expect(text).toMatch(/server +\|#{25,}\.*\| +0\.989s +FAILED/);
    expect(text).toMatch(/never_runs +\|\.{30}\| +- +CANCELLED/);
    expect(text).toMatch(/\+00\.010s +server +SUBMITTED +attempt=1/);
    expect(text).toMatch(/\+00\.501s +server +READY +log_watch "up"/);
    expect(text).toMatch(/\+01\.100s +server +STOPPED +fail_fast SIGTERM 0\.090s/);
    expect(text).toMatch(
      /server +readiness +log_watch +\[OK\] +0\.000s \(1 check\) +log_watch "up": 1\/1 matches/,
    );
    expect(text).toMatch(
      /server +failure +log_watch +\[FAIL\] +0\.100s \(2 checks\) +log_watch "Traceback": 1\/1 matches/,
    );
    expect(text).toMatch(/server +localhost +CUDA_VISIBLE_DEVICES=0,1/);
    // the fixture writes no file: a command log that does not exist is not named as one
    expect(text).toContain('bash: not written (no bash task started)');
    expect(text).toContain('START -> server\nserver -> bench\nbench, server -> never_runs\n');
    expect(text).toContain(
      'server: FAILED after 1 attempt(s) - failure probe terminated: x\n  log: /out/fp-1/server/server.log',
    );
  });

  it('Command Logs name a log only once it was written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sflow-cmdlogs-'));
    try {
      const logs = new SummaryModel();
      for (const e of events) logs.apply(e.type === 'run_plan' ? { ...e, commandLogs: [] } : e);
      logs.commandLogs = [
        { family: 'bash', path: join(dir, 'bash_cmds.log') },
        { family: 'slurm', path: join(dir, 'slurm_cmds.log') },
      ];
      writeFileSync(join(dir, 'bash_cmds.log'), '# started\n');
      const t = renderSummary(logs, { summaryPath: 'x' });
      const section = t.slice(t.indexOf('Command Logs\n')).split('\n').slice(2, 4);
      expect(section).toEqual([
        `bash: ${join(dir, 'bash_cmds.log')}`,
        'slurm: not written (no slurm task started)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run in progress renders too', () => {
    const live = new SummaryModel();
    for (const e of events.slice(0, 8)) live.apply(e);
    const t = renderSummary(live, { summaryPath: 'x', now: at(600) });
    expect(t).toContain('Ended    : (running)');
    expect(t).toMatch(/bench +RUNNING +1 +0\.095s/);
  });
});

describe('probe traces with several probes of one kind', () => {
  it('keeps one row per probe', () => {
    const m = new SummaryModel();
    m.apply(events[0]);
    m.apply({
      t: at(1),
      type: 'run_plan',
      tasks: [
        {
          name: 'svc',
          base: 'svc',
          backend: 'local',
          dependsOn: [],
          service: true,
          probes: [
            { role: 'readiness', kind: 'tcp_port', target: 'tcp_port 127.0.0.1:1' },
            { role: 'readiness', kind: 'tcp_port', target: 'tcp_port 127.0.0.1:2' },
          ],
          retries: null,
          nodes: [],
          gpus: null,
          logPath: 'l',
          outputDir: 'o',
        },
      ],
      backends: [],
    });
    for (const [port, ok] of [
      [1, true],
      [2, false],
    ] as const) {
      m.apply({
        t: at(5),
        type: 'probe_result',
        task: 'svc',
        role: 'readiness',
        kind: 'tcp_port',
        ok,
        detail: `127.0.0.1:${port} ${ok ? 'open' : 'ECONNREFUSED'}`,
        target: `tcp_port 127.0.0.1:${port}`,
      });
    }
    const text = renderSummary(m, { summaryPath: 'x', now: at(10) });
    expect(text).toMatch(/svc +readiness +tcp_port +\[OK\] .*127\.0\.0\.1:1 open/);
    expect(text).toMatch(/svc +readiness +tcp_port +\[FAIL\] .*127\.0\.0\.1:2 ECONNREFUSED/);
  });
});

describe('task folders', () => {
  it('lists the tasks whose names had to change to become folder names, and only those', () => {
    const long = `bench_${'x'.repeat(200)}`;
    const m = new SummaryModel();
    m.apply(events[0]);
    const info = (name: string, folder: string) => ({
      name,
      base: 'bench',
      backend: 'local',
      dependsOn: [],
      service: false,
      probes: [],
      retries: null,
      nodes: [],
      gpus: null,
      logPath: `/out/fp-1/${folder}/${folder}.log`,
      outputDir: `/out/fp-1/${folder}`,
    });
    m.apply({
      t: at(1),
      type: 'run_plan',
      tasks: [info('ok', 'ok'), info(long, 'bench_xxx-1234abcd')],
      backends: [],
    });
    const text = renderSummary(m, { summaryPath: 'x', now: at(10) });
    expect(text).toContain('Task Folders (names changed to be safe folder names)');
    expect(text).toMatch(new RegExp(`"${long}" +bench_xxx-1234abcd`));
    expect(text).not.toMatch(/"ok"/);
  });
});

describe('sflow.log', () => {
  it('writes formatted driver lines at or above the level, never task output', async () => {
    const p = join(dir, 'sflow.log');
    const sink = new SflowLogSink(p, 'warning');
    for (const e of events) sink.emit(e);
    await sink.close();
    const lines = readFileSync(p, 'utf8').trimEnd().split('\n');
    for (const l of lines)
      expect(l).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - sflow - (WARNING|ERROR|CRITICAL) - /);
    expect(
      lines.some((l) =>
        l.endsWith('Fail-fast: failure probe terminated: server. Cancelling remaining tasks.'),
      ),
    ).toBe(true);
    expect(lines.join('\n')).not.toContain('secret task output');
    expect(lines.join('\n')).not.toContain('Submitting task');
  });

  it('maps events to the v0.2 messages', () => {
    expect(logLinesFor({ t: 0, type: 'task_submitted', task: 'x', attempt: 1 }, 0)).toEqual([
      ['info', 'Submitting task: x'],
    ]);
    expect(
      logLinesFor(
        { t: 2500, type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'Workflow completed' },
        0,
      )[0],
    ).toEqual(['info', 'Workflow execution finished in 0:00:02.500000']);
    expect(logLinesFor({ t: 0, type: 'signal', signal: 'SIGINT', count: 1 }, 0)).toEqual([
      ['warning', 'Received SIGINT; requesting shutdown…'],
    ]);
  });
});

describe('events.jsonl', () => {
  it('round-trips every event', async () => {
    const p = join(dir, 'events.jsonl');
    const sink = new EventsJsonlSink(p);
    for (const e of events) sink.emit(e);
    await sink.close();
    expect(parseEventsJsonl(readFileSync(p, 'utf8'))).toEqual(events);
  });
});

describe('console reporter', () => {
  it('prints state changes in event order and the verdict with the output folder', async () => {
    const log: Array<['out' | 'err', string]> = [];
    const c = new ConsoleReporter({
      taskOutput: false,
      out: (s) => log.push(['out', s]),
      err: (s) => log.push(['err', s]),
    });
    for (const e of events) c.emit(e);
    await c.close();
    const out = log
      .filter(([k]) => k === 'out')
      .map(([, s]) => s)
      .join('');
    expect(out).toContain('▶ server started\n');
    expect(out).toContain('● server ready (0.5s)\n');
    expect(out).toContain('✗ server failed (still running): failure probe terminated: x\n');
    expect(out.indexOf('✗ server failed')).toBeLessThan(out.indexOf('⊘ bench cancelled'));
    // stdout is flushed before anything goes to stderr; the verdict comes last
    expect(log[log.length - 1]).toEqual([
      'err',
      "✗ Workflow 'fp' failed: 1 task(s) failed (server)\n  Output folder: /out/fp-1\n",
    ]);
    expect(log[log.length - 2][0]).toBe('out');
  });
});

describe('output batching', () => {
  it('joins small writes, flushes at the limit and on the next turn', async () => {
    const { OutputBatcher } = await import('../../../src/reporters/console.js');
    const got: string[] = [];
    const b = new OutputBatcher((s) => got.push(s), 10);
    b.write('abc');
    b.write('def');
    expect(got).toEqual([]);
    b.write('ghijk');
    expect(got).toEqual(['abcdefghijk']);
    b.write('x');
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['abcdefghijk', 'x']);
  });
});

describe('External Command Health verdict', () => {
  const call = (
    ok: boolean,
    extra: Partial<Extract<RunEvent, { type: 'external_call' }>> = {},
  ): RunEvent => ({
    t: at(1),
    type: 'external_call',
    tool: 'docker',
    args: ['inspect', 'sflow-p1-a-localhost'],
    exitCode: ok ? 0 : 1,
    durationMs: 20,
    timedOut: false,
    ok,
    ...extra,
  });
  const health = (evs: RunEvent[]): string => {
    const m = new SummaryModel();
    for (const e of [events[0], ...evs]) m.apply(e);
    const text = renderSummary(m, { summaryPath: '/out/fp-1/sflow_summary.log' });
    const start = text.indexOf('External Command Health');
    return text.slice(start, text.indexOf('Command Logs', start));
  };

  it('OK with no call, and with expected answers (they are counted, not failures)', () => {
    expect(health([])).toContain('Verdict: OK (no external commands)');
    const h = health([call(true), call(true, { expected: true, exitCode: 1, error: 'No such container' })]);
    expect(h).toMatch(/^docker +2 +0 +0 .* healthy$/m);
    expect(h).toContain('Verdict: OK: 2 call(s), none failed; 1 expected answer(s)');
  });

  it('DEGRADED names each failed call with what it said', () => {
    const h = health([
      call(true),
      call(false, { args: ['rm', '-f', 'c1'], error: 'Error response from daemon: disk I/O error' }),
      call(false, { tool: 'scontrol', args: ['show', 'job', '7'], exitCode: null, timedOut: true }),
    ]);
    expect(h).toContain('Verdict: DEGRADED: 2 of 3 call(s) failed');
    expect(h).toContain('  docker rm -f c1 → exit 1: Error response from daemon: disk I/O error');
    expect(h).toContain('  scontrol show job 7 → timed out');
  });
});
