/**
 * The live view's ink components (ink-testing-library): header, clock, run directory at 80
 * columns, task table, log pane, keys. The model is fed real RunEvents, the logs are real files.
 */
import { restoreCi } from './no-ci.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createElement } from 'react';
import { render } from 'ink-testing-library';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { App } from '../../../src/reporters/tui/app.js';
import { TuiModel } from '../../../src/reporters/tui/model.js';
import type { RunEvent } from '../../../src/events/events.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-tui-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  restoreCi();
});
const mounted: Array<{ unmount: () => void }> = [];
afterEach(() => {
  for (const m of mounted.splice(0)) m.unmount();
});

const RUN_DIR = join(
  '/very/long/path/to/the/workspace/of/someone/who/likes/deep/folders',
  'sflow_output',
  'pipeline-20260101-120000-abcdef',
);

function model(t0: number): TuiModel {
  const m = new TuiModel(t0);
  const ev = (e: any, t = t0) => m.emit({ t, ...e } as RunEvent);
  const names = ['fetch', 'tokenize', 'count', 'train', 'report'];
  ev({ type: 'run_started', workflow: 'pipeline', runId: 'r', runDir: RUN_DIR, tasks: names });
  ev({
    type: 'run_plan',
    backends: [{ name: 'box', type: 'local', nodes: [{ name: 'localhost', ip: '127.0.0.1', numGpus: 4 }] }],
    tasks: names.map((n) => ({
      name: n,
      base: n,
      backend: 'box',
      dependsOn: [],
      service: false,
      probes: [],
      retries: n === 'train' ? { count: 2, intervalS: 1, backoff: 1 } : null,
      nodes: ['localhost'],
      gpus: n === 'train' ? [0, 1] : null,
      logPath: join(dir, `${n}.log`),
      outputDir: dir,
    })),
  });
  for (const n of names)
    writeFileSync(join(dir, `${n}.log`), `${n} line 1\n${n} line 2\r${n} redrawn\n\x1b[31m${n} red\x1b[0m\n`);
  ev({ type: 'task_started', task: 'fetch', attempt: 1 }, t0);
  ev({ type: 'task_finished', task: 'fetch', attempt: 1, status: 'COMPLETED', exitCode: 0 }, t0 + 2000);
  ev({ type: 'task_started', task: 'tokenize', attempt: 1 }, t0 + 2000);
  ev({ type: 'task_started', task: 'train', attempt: 2 }, t0 + 2500);
  return m;
}

async function until(f: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function show(m: TuiModel, extra: Record<string, unknown> = {}) {
  let clock = Date.parse('2026-01-01T12:00:05');
  const quits: number[] = [];
  const app = render(
    createElement(App, {
      model: m,
      onQuit: () => quits.push(1),
      columns: 80,
      rows: 24,
      refreshMs: 20,
      now: () => clock,
      ...extra,
    }),
  );
  mounted.push(app);
  return {
    app,
    quits,
    frame: () => app.lastFrame() ?? '',
    advance: (ms: number) => (clock += ms),
  };
}

describe('live view', () => {
  it('header: workflow, state, clock, elapsed; the run directory is wrapped, never clipped at 80 columns', () => {
    const m = model(Date.parse('2026-01-01T12:00:00'));
    const { frame } = show(m);
    const f = frame();
    expect(f).toContain('sflow ▸ pipeline  RUNNING  12:00:05  elapsed 0:05');
    expect(f).toContain('5 task(s) · 2 running · 1 completed · 2 pending');
    for (const line of f.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(f.replace(/\n/g, '')).toContain(`run dir: ${RUN_DIR}`);
  });

  it('task table: state, attempt of total, time, placement, backends', () => {
    const { frame } = show(model(Date.parse('2026-01-01T12:00:00')));
    const f = frame();

    expect(f).toMatch(/✓ COMPLETED 1 +0:02 +fetch +localhost/);
    expect(f).toMatch(/▶ RUNNING +2\/3 +0:02 +train +localhost \[0,1\]/);
    expect(f).toMatch(/· PENDING +report/);
    expect(f).toContain('box (local): 1 node(s), 4 GPU(s) — localhost');
  });

  it('the clock ticks every second even when nothing happens', async () => {
    const { frame, advance } = show(model(Date.parse('2026-01-01T12:00:00')));
    expect(frame()).toContain('12:00:05');
    advance(1000);
    await until(() => frame().includes('12:00:06'), 'the clock to tick');
    advance(60_000);
    await until(() => frame().includes('elapsed 1:06'), 'elapsed to advance');
  });

  it('follows the newest running task; keys select another task, pause, resume and quit', async () => {
    const m = model(Date.parse('2026-01-01T12:00:00'));
    const { app, frame, quits } = show(m);
    // auto: the newest running task (train) is selected and its log shown, as a terminal would
    expect(frame()).toMatch(/›▶ RUNNING +2\/3 +0:02 +train/);
    expect(frame()).toContain('log: train');
    expect(frame()).toContain('train redrawn');
    expect(frame()).not.toContain('line 2');
    expect(frame()).toContain('train red');
    expect(frame()).not.toContain('\x1b[31m');
    app.stdin.write('k');
    await until(() => /›· PENDING +count/.test(frame()), 'selection to move up');
    expect(frame()).toContain('log: count');
    app.stdin.write('\x1b[A'); // arrow up
    await until(() => /›▶ RUNNING +1 +0:03 +tokenize/.test(frame()), 'arrow up');
    app.stdin.write('f');
    await until(() => frame().includes('— paused'), 'pause');
    app.stdin.write('f');
    await until(() => frame().includes('— following'), 'follow');
    app.stdin.write('q');
    await until(() => quits.length === 1, 'q to reach onQuit');
    app.stdin.write('\x03'); // Ctrl-C: the same path
    await until(() => quits.length === 2, 'Ctrl-C to reach onQuit');
  });

  it('keys that arrive in one chunk (a busy terminal) each count: "kk" moves twice, "gjq" quits', async () => {
    const { app, frame, quits } = show(model(Date.parse('2026-01-01T12:00:00')));
    expect(frame()).toContain('log: train');
    app.stdin.write('kk');
    await until(() => /›▶ RUNNING +1 +0:03 +tokenize/.test(frame()), 'two moves up from one chunk');
    app.stdin.write('gjq');
    await until(() => quits.length === 1, 'the q at the end of a chunk to reach onQuit');
    expect(frame()).toContain('log: tokenize');
  });

  it('the end of the run: verdict in the header, the notice tells how to leave', async () => {
    const m = model(Date.parse('2026-01-01T12:00:00'));
    const { frame } = show(m);
    m.emit({
      t: Date.parse('2026-01-01T12:00:04'),
      type: 'run_finished',
      status: 'FAILED',
      exitCode: 1,
      message: "Workflow 'pipeline' failed: train",
    });
    await until(() => frame().includes('FAILED'), 'the verdict');
    expect(frame()).toContain("Workflow 'pipeline' failed: train — press q to exit");
    expect(frame()).toContain('elapsed 0:04');
  });

  it('a narrow and short terminal still shows the header and the selected task', () => {
    const { frame } = show(model(Date.parse('2026-01-01T12:00:00')), { columns: 50, rows: 12 });
    const f = frame();
    expect(f).toContain('sflow ▸ pipeline');
    expect(f).toMatch(/›▶ RUNNING/);
    for (const line of f.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
  });
});

describe('model', () => {
  it('retries, readiness details, a stopped service and signals', () => {
    const m = new TuiModel(0);
    const ev = (e: any) => m.emit({ t: 1, ...e } as RunEvent);
    ev({ type: 'task_started', task: 's', attempt: 1 });
    ev({
      type: 'probe_result',
      task: 's',
      role: 'readiness',
      kind: 'tcp_port',
      ok: false,
      detail: 'refused',
    });
    expect(m.tasks[0].detail).toBe('tcp_port: refused');
    ev({ type: 'task_ready', task: 's', attempt: 1, probe: 'tcp' });
    ev({ type: 'task_stopped', task: 's', attempt: 1, why: 'teardown', signals: ['SIGTERM'], elapsedMs: 5 });
    expect(m.tasks[0]).toMatchObject({ state: 'READY', detail: 'stopped (teardown)' });
    ev({ type: 'task_started', task: 'f', attempt: 1 });
    ev({ type: 'task_retry', task: 'f', attempt: 1, exitCode: 3, delayS: 2, nextAttempt: 2, total: 3 });
    expect(m.tasks[1]).toMatchObject({ state: 'PENDING', detail: 'exit 3; retry 2/3 in 2s' });
    const v = m.version;
    ev({ type: 'signal', signal: 'SIGINT', count: 1 });
    expect(m.stopping).toMatch(/SIGINT: cancelling/);
    expect(m.version).toBeGreaterThan(v);
  });
});
