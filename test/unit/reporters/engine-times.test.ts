/**
 * Every consumer of the event stream measures a task with the engine's times (`at` of
 * task_started / task_finished / task_retry) when the engine gave them, and the moment the driver
 * saw the change (`t`) otherwise: the console, the summary, the TUI, the report's Gantt bars and
 * the monitor's lifecycle markers. The summary states a backend whose engine clock is provably
 * off from this host's by more than the bound, and nothing when it is not.
 */
import { describe, expect, it } from 'vitest';
import { eventTime, type RunEvent } from '../../../src/events/events.js';
import { taskEventOf } from '../../../src/monitor/markers.js';
import { buildModel } from '../../../src/report/model.js';
import { timelineSvg } from '../../../src/report/timeline-svg.js';
import { ConsoleReporter } from '../../../src/reporters/console.js';
import { EngineClocks, SKEW_BOUND_MS } from '../../../src/reporters/engine-clock.js';
import { SummaryModel } from '../../../src/reporters/summary-model.js';
import { renderSummary } from '../../../src/reporters/summary-render.js';
import { TuiModel } from '../../../src/reporters/tui/model.js';
import { info } from '../report/events.js';

const T0 = 1_800_000_000_000;

/**
 * One remote task seen late by polling: submitted at +0, the engine started it at +0.2 s and ended
 * it at +2.2 s (skew: the engine's clock runs `skew` ms ahead); the driver saw the start at +1.2 s
 * and the end (after result parsing) at +3.5 s. `two` ran 2 s on the engine.
 */
function run(skew = 0): RunEvent[] {
  return [
    {
      t: T0,
      type: 'run_started',
      workflow: 'wf',
      runId: 'wf-1',
      runDir: '/nonexistent/wf-1',
      tasks: ['two'],
    },
    { t: T0, type: 'run_plan', tasks: [info('two', { backend: 'cluster' })], backends: [] },
    { t: T0, type: 'task_submitted', task: 'two', attempt: 1 },
    { t: T0 + 1_200, type: 'task_started', task: 'two', attempt: 1, at: T0 + 200 + skew },
    {
      t: T0 + 3_500,
      type: 'task_finished',
      task: 'two',
      attempt: 1,
      status: 'COMPLETED',
      exitCode: 0,
      signal: null,
      at: T0 + 2_200 + skew,
    },
    { t: T0 + 3_600, type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'ok' },
  ];
}

describe('engine times on every consumer', () => {
  it('eventTime: the engine time when given, else the observation', () => {
    const [, , sub, started] = run();
    expect(eventTime(started)).toBe(T0 + 200);
    expect(eventTime(sub)).toBe(T0);
    expect(eventTime({ ...started, at: undefined } as RunEvent)).toBe(T0 + 1_200);
  });

  it('the console says the engine duration', async () => {
    const lines: string[] = [];
    const c = new ConsoleReporter({
      taskOutput: false,
      out: (s) => lines.push(s),
      err: (s) => lines.push(s),
    });
    for (const e of run()) c.emit(e);
    await c.close();
    expect(lines.join('')).toContain('✓ two completed (2.0s)');
  });

  it('the summary: duration 2.000s, and no clock line while the clocks agree', () => {
    const m = new SummaryModel();
    for (const e of run()) m.apply(e);
    const text = renderSummary(m, { summaryPath: 'x' });
    expect(text).toMatch(/^two +COMPLETED +1 +2\.000s +0/m);
    expect(text).not.toContain('Engine Clocks');
  });

  it('the TUI rows and the report Gantt bar span the engine times', () => {
    const tui = new TuiModel(T0);
    for (const e of run()) tui.emit(e);
    const row = tui.tasks.find((r) => r.name === 'two');
    expect([row?.startedAt, row?.endedAt]).toEqual([T0 + 200, T0 + 2_200]);
    const bar =
      /<rect class="bar [^"]*" data-task="two" data-attempt="1" data-start="(\d+)" data-end="(\d+)"/.exec(
        timelineSvg(buildModel(run())).svg,
      );
    expect([Number(bar?.[1]), Number(bar?.[2])]).toEqual([T0 + 200, T0 + 2_200]);
  });

  it('monitor lifecycle markers sit at the engine end', () => {
    expect(taskEventOf(run()[4])).toEqual({ t: T0 + 2_200, task: 'two', kind: 'done' });
  });

  it('a retried attempt ends at its engine end in the report', () => {
    const events = run().slice(0, 4);
    events.push({
      t: T0 + 1_900,
      type: 'task_retry',
      task: 'two',
      attempt: 1,
      exitCode: 1,
      delayS: 0,
      nextAttempt: 2,
      total: 2,
      at: T0 + 1_000,
    });
    const a = buildModel(events).tasks.find((t) => t.name === 'two')!.attempts[0];
    // ended at the engine's end, not when the driver saw the exit (+1.9 s)
    expect([a.started, a.ended, a.outcome]).toEqual([T0 + 200, T0 + 1_000, 'RETRIED']);
  });
});

describe('engine clock skew in the summary', () => {
  it('an engine 5 s ahead is stated with its bounds; durations stay the engine’s', () => {
    const m = new SummaryModel();
    for (const e of run(5_000)) m.apply(e);
    const text = renderSummary(m, { summaryPath: 'x' });
    // start: offset in [5.2 − 1.2, 5.2 − 0] = [4.0, 5.2]; end: [7.2 − 3.5, 7.2 − 0] → [4.0, 5.2]
    expect(text).toContain('Engine Clocks');
    expect(text).toMatch(
      /⚠ cluster: the engine's clock is 4\.0\.\.5\.2s ahead of this host's \(from 2 task time\(s\)\)/,
    );
    expect(text).toMatch(/^two +COMPLETED +1 +2\.000s/m);
  });

  it('an engine behind by 3 s is stated; within the bound nothing is', () => {
    const behind = new EngineClocks();
    for (const e of run(-3_000)) behind.apply(e);
    expect(behind.skewed().map((b) => [b.backend, b.hi < 0])).toEqual([['cluster', true]]);
    const near = new EngineClocks();
    for (const e of run(SKEW_BOUND_MS - 1_000)) near.apply(e);
    expect(near.skewed()).toEqual([]);
  });
});
