/** Task events as monitor-chart markers (`eventMarkers`): kinds, order, merging, thinning. */
import { describe, expect, it } from 'vitest';
import { eventMarkers } from '../../../src/report/markers.js';
import type { Attempt, ReportModel, ReportTask } from '../../../src/report/model.js';

const T0 = 1_700_000_000_000;

/** An attempt whose times are ms after T0. */
function att(outcome: Attempt['outcome'], t: { started?: number; ready?: number; ended?: number }): Attempt {
  return {
    n: 1,
    session: 1,
    submitted: T0,
    outcome,
    exitCode: null,
    ...(t.started !== undefined ? { started: T0 + t.started } : {}),
    ...(t.ready !== undefined ? { ready: T0 + t.ready } : {}),
    ...(t.ended !== undefined ? { ended: T0 + t.ended } : {}),
  };
}

function task(name: string, ...attempts: Attempt[]): ReportTask {
  return { name, status: 'COMPLETED', attempts, exitCode: 0 };
}

function model(tasks: ReportTask[]): ReportModel {
  return {
    workflow: 'w',
    runId: 'r1',
    runDir: '/nonexistent',
    startedAt: T0,
    endedAt: T0,
    finished: true,
    status: 'COMPLETED',
    message: '',
    tasks,
    backends: [],
    probes: [],
    signals: [],
    errors: [],
    warnings: 0,
    sessions: [],
  };
}

/** epoch seconds of T0 + ms, as a marker carries it */
const s = (ms: number) => Number(((T0 + ms) / 1000).toFixed(3));

describe('eventMarkers', () => {
  it('is empty when no attempt has a time', () => {
    expect(eventMarkers(model([]))).toEqual([]);
    expect(eventMarkers(model([task('queued', att('SUBMITTED', {}))]))).toEqual([]);
  });

  it('draws start, ready and each end kind at its time in seconds, in time order', () => {
    // 100 s run: the merge window is 1.5 s, every event here is further apart than that
    const m = model([
      task('late', att('COMPLETED', { started: 60_000, ended: 100_000 })),
      task('server', att('CANCELLED', { started: 0, ready: 10_000, ended: 90_000 })),
      task(
        'flaky',
        att('RETRIED', { started: 20_000, ended: 30_000 }),
        att('FAILED', { started: 40_000, ended: 50_000 }),
      ),
    ]);
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', 'server start'],
      [s(10_000), 'ready', 'server ready'],
      [s(20_000), 'start', 'flaky start'],
      [s(30_000), 'fail', 'flaky fail'],
      [s(40_000), 'start', 'flaky start'],
      [s(50_000), 'fail', 'flaky fail'],
      [s(60_000), 'start', 'late start'],
      [s(90_000), 'cancel', 'server cancel'],
      [s(100_000), 'done', 'late done'],
    ]);
  });

  it('keeps millisecond precision in the marker time', () => {
    const m = model([task('a', att('COMPLETED', { started: 1_234, ended: 101_234 }))]);
    expect(eventMarkers(m).map((x) => x[0])).toEqual([(T0 + 1_234) / 1000, (T0 + 101_234) / 1000]);
  });

  it('draws no end for an attempt that has not ended in one of the end outcomes', () => {
    // a RUNNING/READY attempt with an end time (a killed driver) still gets no end marker
    const m = model([
      task('svc', att('READY', { started: 0, ready: 50_000, ended: 100_000 })),
      task('run', att('RUNNING', { started: 100_000, ended: 100_000 })),
    ]);
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', 'svc start'],
      [s(50_000), 'ready', 'svc ready'],
      [s(100_000), 'start', 'run start'],
    ]);
  });

  it('merges events within 1.5 % of the run into one marker at the first', () => {
    // 100 s run, window 1.5 s: three starts at 0, 1 and 1.5 s merge; the next at 1.6 s does not
    const m = model([
      task('b_1', att('COMPLETED', { started: 0, ended: 100_000 })),
      task('b_2', att('COMPLETED', { started: 1_000 })),
      task('b_3', att('COMPLETED', { started: 1_500 })),
      task('b_4', att('COMPLETED', { started: 1_600 })),
    ]);
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', '3 tasks start'],
      [s(1_600), 'start', 'b_4 start'],
      [s(100_000), 'done', 'b_1 done'],
    ]);
  });

  it('measures the window from the group’s first event (no chaining)', () => {
    // 1 s apart each, window 1.5 s: 0 and 1 merge, 2 starts a new group with 3
    const m = model([
      task('a', att('COMPLETED', { started: 0, ended: 100_000 })),
      task('b', att('COMPLETED', { started: 1_000 })),
      task('c', att('COMPLETED', { started: 2_000 })),
      task('d', att('COMPLETED', { started: 3_000 })),
    ]);
    expect(eventMarkers(m).map((x) => x[2])).toEqual(['2 tasks start', '2 tasks start', 'a done']);
  });

  it('labels a mixed group by its first event, and a fail in it makes it a fail', () => {
    const m = model([
      task('a', att('COMPLETED', { started: 0 })),
      task('bench_1', att('COMPLETED', { started: 50_000, ended: 100_000 })),
      task('bench_2', att('FAILED', { started: 40_000, ended: 100_500 })),
      task('bench_3', att('COMPLETED', { started: 40_000, ready: 45_000 })),
    ]);
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', 'a start'],
      [s(40_000), 'start', '2 tasks start'],
      [s(45_000), 'ready', 'bench_3 ready'],
      [s(50_000), 'start', 'bench_1 start'],
      [s(100_000), 'fail', 'bench_1 done +1 more'],
    ]);
  });

  it('keeps one kind for a group of only ends, counted', () => {
    const m = model([
      task('a', att('COMPLETED', { started: 0, ended: 100_000 })),
      task('b', att('COMPLETED', { ended: 100_200 })),
      task('c', att('CANCELLED', { ended: 100_300 })),
    ]);
    // done, done, cancel: two kinds, so the first's label with a count; no fail: the first's kind
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', 'a start'],
      [s(100_000), 'done', 'a done +2 more'],
    ]);
  });

  it('uses a window of at least 1 ms for a run with no span', () => {
    const m = model([
      task('a', att('COMPLETED', { started: 0 })),
      task('b', att('COMPLETED', { started: 1 })),
      task('c', att('COMPLETED', { started: 2 })),
    ]);
    expect(eventMarkers(m)).toEqual([
      [s(0), 'start', '2 tasks start'],
      [s(2), 'start', 'c start'],
    ]);
  });

  it('thins to at most max markers, evenly, keeping the first', () => {
    // 10 starts 10 s apart (window 1.35 s): ten markers
    const tasks = Array.from({ length: 10 }, (_, i) =>
      task(`t${i}`, att('COMPLETED', { started: i * 10_000 })),
    );
    const all = eventMarkers(model(tasks));
    expect(all).toHaveLength(10);
    expect(eventMarkers(model(tasks), 10)).toEqual(all);
    const thin = eventMarkers(model(tasks), 4);
    expect(thin.map((x) => x[2])).toEqual(['t0 start', 't2 start', 't5 start', 't7 start']);
  });
});
