/**
 * The probe wiring of one attempt (src/runtime/task-probes.ts), against a driver that hands the
 * test each loop's callbacks: which results are reported and how (`ok` means healthy), when the
 * task becomes READY, which hooks fail it and with what text, what a stale attempt may still do,
 * `on_error: warn` for a failure probe that cannot run, and the final readiness check.
 */
import { describe, expect, it } from 'vitest';
import type { RunEventInput } from '../../../src/events/events.js';
import type { ProbeContext, ProbeDriver, ProbeLoopEvents } from '../../../src/probes/probe-driver.js';
import { describeProbe } from '../../../src/probes/probe-driver.js';
import type { CheckResult } from '../../../src/probes/types.js';
import type { PlannedProbe } from '../../../src/plan/types.js';
import { finalReadinessCheck, startTaskProbes, stopTaskProbes } from '../../../src/runtime/task-probes.js';
import { newTaskRt, type TaskRt } from '../../../src/runtime/task-state.js';
import { probe, task } from './fakes.js';

class HandDriver implements ProbeDriver {
  readonly loops: { probe: PlannedProbe; ev: ProbeLoopEvents; stopped: boolean }[] = [];
  once: (p: PlannedProbe) => Promise<CheckResult> = () => Promise.resolve({ ok: false, detail: 'no' });
  readonly onceAsked: PlannedProbe[] = [];
  start(p: PlannedProbe, _ctx: ProbeContext, ev: ProbeLoopEvents) {
    const loop = { probe: p, ev, stopped: false };
    this.loops.push(loop);
    return { stop: () => (loop.stopped = true) };
  }
  checkOnce(p: PlannedProbe): Promise<CheckResult> {
    this.onceAsked.push(p);
    return this.once(p);
  }
}

function setUp(readiness: PlannedProbe[], failure: PlannedProbe[]) {
  const t: TaskRt = newTaskRt(task('svc', { probes: { readiness, failure } }), undefined as never);
  t.status = 'RUNNING';
  const driver = new HandDriver();
  const events: RunEventInput[] = [];
  const ready: string[] = [];
  const fails: string[] = [];
  const state = { live: true };
  startTaskProbes(t, driver, {
    live: () => state.live,
    emit: (e) => events.push(e),
    ctx: () => ({ startedAt: 0 }) as unknown as ProbeContext,
    ready: (s) => ready.push(s),
    fail: (kind, reason) => fails.push(`${kind}: ${reason}`),
  });
  const loop = (i: number) => {
    const l = driver.loops[i];
    if (!l) throw new Error(`no loop ${i}`);
    return l.ev;
  };
  return { t, driver, events, ready, fails, state, loop };
}

const r1 = probe('readiness', { port: 8000 });
const r2 = probe('readiness', { port: 8001 });
const f1 = probe('failure', { port: 9000 });
const name = (p: PlannedProbe) => describeProbe(p, 'svc');

describe('startTaskProbes', () => {
  it('starts a loop per probe and keeps them; stopTaskProbes stops them all', () => {
    const s = setUp([r1, r2], [f1]);
    expect(s.driver.loops.map((l) => l.probe)).toEqual([r1, r2, f1]);
    expect(s.t.loops).toHaveLength(3);
    stopTaskProbes(s.t);
    expect(s.driver.loops.every((l) => l.stopped)).toBe(true);
    expect(s.t.loops).toEqual([]);
  });

  it('reports checks with ok meaning healthy, only while the attempt is live', () => {
    const s = setUp([r1], [f1]);
    s.loop(0).onCheck({ ok: false, detail: 'refused' });
    s.loop(1).onCheck({ ok: false, detail: 'no match' });
    s.loop(1).onCheck({ ok: true, detail: 'matched' });
    expect(s.events).toEqual([
      {
        type: 'probe_result',
        task: 'svc',
        role: 'readiness',
        kind: 'tcp_port',
        ok: false,
        detail: 'refused',
        target: name(r1),
      },
      {
        type: 'probe_result',
        task: 'svc',
        role: 'failure',
        kind: 'tcp_port',
        ok: true,
        detail: 'no match',
        target: name(f1),
      },
      {
        type: 'probe_result',
        task: 'svc',
        role: 'failure',
        kind: 'tcp_port',
        ok: false,
        detail: 'matched',
        target: name(f1),
      },
    ]);
    s.state.live = false;
    s.loop(0).onCheck({ ok: true, detail: 'up' });
    s.loop(1).onCheck({ ok: true, detail: 'matched' });
    expect(s.events).toHaveLength(3);
  });

  it('is READY once every readiness probe has passed, naming them all', () => {
    const s = setUp([r1, r2], []);
    s.loop(1).onTrigger({ ok: true, detail: 'up' });
    expect(s.ready).toEqual([]);
    s.loop(1).onTrigger({ ok: true, detail: 'up' }); // the same probe twice is still one
    expect(s.ready).toEqual([]);
    s.loop(0).onTrigger({ ok: true, detail: 'up' });
    expect(s.ready).toEqual([`${name(r1)} + ${name(r2)}`]);
    expect([...s.t.readyPassed].sort()).toEqual([0, 1]);
    expect(s.events.filter((e) => e.type === 'probe_result')).toHaveLength(3);
  });

  it('a readiness pass of a stale attempt, or of a task no longer RUNNING, changes nothing', () => {
    const s = setUp([r1], []);
    s.state.live = false;
    s.loop(0).onTrigger({ ok: true, detail: 'up' });
    s.state.live = true;
    s.t.status = 'READY';
    s.loop(0).onTrigger({ ok: true, detail: 'up' });
    expect(s.ready).toEqual([]);
    expect(s.events).toEqual([]);
    expect(s.t.readyPassed.size).toBe(0);
  });

  it('a readiness deadline fails the task with the wait and the last check', () => {
    const s = setUp([r1], []);
    s.loop(0).onDeadline(12_345, { ok: false, detail: 'connection refused' });
    expect(s.fails).toEqual([
      `readiness_timeout: readiness probe ${name(r1)} not ready after 12.3s (last check: connection refused)`,
    ]);
    const n = setUp([r1], []);
    n.loop(0).onDeadline(500, undefined);
    expect(n.fails).toEqual([`readiness_timeout: readiness probe ${name(r1)} not ready after 0.5s`]);
    for (const stale of [
      (x: ReturnType<typeof setUp>) => (x.state.live = false),
      (x: ReturnType<typeof setUp>) => (x.t.status = 'FAILED'),
    ]) {
      const q = setUp([r1], []);
      stale(q);
      q.loop(0).onDeadline(1000, undefined);
      expect(q.fails).toEqual([]);
    }
  });

  it('a readiness probe that cannot run fails the task at once, reported as a limit', () => {
    const s = setUp([r1], []);
    s.loop(0).onLimit?.('regex took too long');
    expect(s.events).toEqual([
      {
        type: 'probe_result',
        task: 'svc',
        role: 'readiness',
        kind: 'tcp_port',
        ok: false,
        detail: 'regex took too long',
        target: name(r1),
        limit: 'regex took too long',
      },
    ]);
    expect(s.fails).toEqual([`probe_limit: readiness probe ${name(r1)} cannot run: regex took too long`]);
    for (const stale of [
      (x: ReturnType<typeof setUp>) => (x.state.live = false),
      (x: ReturnType<typeof setUp>) => (x.t.status = 'READY'),
    ]) {
      const q = setUp([r1], []);
      stale(q);
      q.loop(0).onLimit?.('x');
      expect(q.fails).toEqual([]);
      expect(q.events).toEqual([]);
    }
  });

  it('a failure probe that fires fails the task, live attempts only', () => {
    const s = setUp([], [f1]);
    s.loop(0).onTrigger({ ok: true, detail: 'OOM in log' });
    expect(s.fails).toEqual([
      `failure_probe: failure probe terminated: ${name(f1)} fired (OOM in log); the process was still running`,
    ]);
    expect(s.events).toMatchObject([
      { type: 'probe_result', role: 'failure', ok: false, detail: 'OOM in log' },
    ]);
    s.loop(0).onDeadline(1, undefined); // failure probes have no deadline
    expect(s.fails).toHaveLength(1);
    const q = setUp([], [f1]);
    q.state.live = false;
    q.loop(0).onTrigger({ ok: true, detail: 'x' });
    expect(q.fails).toEqual([]);
    expect(q.events).toEqual([]);
  });

  it('a failure probe that cannot run fails the task, unless on_error says warn', () => {
    const s = setUp([], [f1]);
    s.loop(0).onLimit?.('regex took too long');
    expect(s.events).toMatchObject([
      { type: 'probe_result', role: 'failure', ok: false, limit: 'regex took too long' },
    ]);
    expect(s.fails).toEqual([
      `probe_limit: failure probe ${name(f1)} cannot run: regex took too long (on_error: warn lets the task go on unwatched)`,
    ]);
    const warn = probe('failure', { port: 9001, onError: 'warn' });
    const w = setUp([], [warn]);
    w.loop(0).onLimit?.('regex took too long');
    expect(w.fails).toEqual([]);
    expect(w.events).toEqual([
      expect.objectContaining({ type: 'probe_result', limit: 'regex took too long' }),
      {
        type: 'log',
        level: 'warning',
        message: `svc: failure probe ${describeProbe(warn, 'svc')} cannot run: regex took too long; on_error: warn, the task goes on unwatched`,
      },
    ]);
    const q = setUp([], [f1]);
    q.state.live = false;
    q.loop(0).onLimit?.('x');
    expect(q.fails).toEqual([]);
    expect(q.events).toEqual([]);
  });
});

describe('finalReadinessCheck', () => {
  it('checks only the probes that have not passed, and needs all of them', async () => {
    const s = setUp([r1, r2], []);
    s.loop(0).onTrigger({ ok: true, detail: 'up' });
    s.driver.once = () => Promise.resolve({ ok: true, detail: 'up' });
    expect(await finalReadinessCheck(s.t, s.driver, () => ({}) as ProbeContext)).toBe(true);
    expect(s.driver.onceAsked).toEqual([r2]);

    const m = setUp([r1, r2], []);
    m.driver.once = (p) => Promise.resolve({ ok: p === r1, detail: '' });
    expect(await finalReadinessCheck(m.t, m.driver, () => ({}) as ProbeContext)).toBe(false);

    const e = setUp([r1], []);
    e.driver.once = () => Promise.reject(new Error('cannot check'));
    expect(await finalReadinessCheck(e.t, e.driver, () => ({}) as ProbeContext)).toBe(false);
    e.driver.once = () => Promise.resolve({ ok: true, detail: 'up' });
    expect(await finalReadinessCheck(e.t, e.driver, () => ({}) as ProbeContext)).toBe(true);
  });
});
