/**
 * The orchestrator's less travelled paths (issue 31: the runtime group's surviving mutants, by
 * path): a stop that meets a launch or a final readiness check in flight, a resumed session's
 * attempt numbers in every retry decision, a READY task going back to PENDING, a task satisfied
 * twice, and what the engine says about an attempt the orchestrator has not seen start.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunEventInput } from '../../../src/runtime/orchestrator.js';
import type { ProbeTransport } from '../../../src/probes/types.js';
import { Scope } from '../../../src/runtime/scope.js';
import { probe, task } from './fakes.js';
import { fakeClock, launched, runAll, setup, statusMap } from './orchestrator-setup.js';

afterEach(() => {
  vi.useRealTimers();
});

const service = (name: string, over: Parameters<typeof task>[1] = {}) =>
  task(name, { probes: { readiness: [probe('readiness')], failure: [] }, ...over });
const ofType = <T extends RunEventInput['type']>(events: RunEventInput[], type: T) =>
  events.filter((e): e is Extract<RunEventInput, { type: T }> => e.type === type);
const busy = () => Object.assign(new Error('spawn x: text file busy'), { code: 'ETXTBSY' });

describe('orchestrator: a stop meets work in flight', () => {
  it('a launch still in flight when a signal comes is waited for, then stopped, and never reported started', async () => {
    fakeClock();
    const { orch, backend, events } = setup([task('a'), task('b')], { a: {}, b: {} }, {}, { launchMs: 50 });
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    orch.requestStop('SIGINT');
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    // the handles came after the stop: the teardown still found them and stopped them
    expect(backend.launches.map((l) => l.task)).toEqual(['a', 'b']);
    expect(backend.alive('a')).toBe(false);
    expect(backend.alive('b')).toBe(false);
    expect(backend.stops.sort()).toEqual(['a', 'b']);
    expect(events.some((e) => e.type === 'task_started')).toBe(false);
  });

  it('a launch that fails because the run stopped is not retried, nor reported failed', async () => {
    fakeClock();
    const { orch, backend, events, final } = setup(
      [task('x', { retries: { count: 3, intervalS: 0, backoff: 1 } })],
      { x: {} },
      {},
      { launchFailsOnAbort: { x: busy() } },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    orch.requestStop('SIGTERM');
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ x: 'CANCELLED' });
    expect(ofType(events, 'task_retry')).toEqual([]);
    expect(ofType(events, 'task_submitted')).toHaveLength(1);
    expect(final('x')).toMatchObject({ status: 'CANCELLED', reason: 'cancelled by SIGTERM' });
    expect(backend.launches).toEqual([]);
  });

  it('a signal during the final readiness check of an exited service wins: it is not made READY', async () => {
    fakeClock();
    const { orch, events, final } = setup(
      [
        service('svc', { retries: { count: 2, intervalS: 0, backoff: 1 } }),
        task('after', { dependsOn: ['svc'] }),
      ],
      { svc: { code: 1, ms: 5 } },
      { svc: { finalCheck: true, finalCheckMs: 50 } },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(20); // exited at 5, its final check answers at 55
    orch.requestStop('SIGINT');
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ svc: 'CANCELLED', after: 'CANCELLED' });
    expect(ofType(events, 'task_ready')).toEqual([]);
    expect(ofType(events, 'task_retry')).toEqual([]);
    expect(final('svc')?.reason).toBe('cancelled by SIGINT');
  });

  it('a taskReady call cut short by the stop is not a warning', async () => {
    fakeClock();
    const { orch, events } = setup(
      [service('svc'), task('after', { dependsOn: ['svc'] })],
      { svc: {}, after: {} },
      { svc: { readyMs: 5 } },
      { taskReady: () => new Promise<void>(() => undefined) },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(20);
    expect(orch.status('svc')).toBe('READY');
    orch.requestStop('SIGINT');
    await runAll(run);
    expect(ofType(events, 'log').filter((e) => e.level === 'warning')).toEqual([]);
  });

  it("a taskReady call that settles leaves no timer behind: the run ends without waiting for the call's bound", async () => {
    fakeClock();
    const t0 = Date.now();
    const { orch } = setup(
      [service('svc'), task('after', { dependsOn: ['svc'] })],
      { svc: {}, after: { code: 0, ms: 5 } },
      { svc: { readyMs: 5 } },
      { taskReady: async () => undefined, taskReadyTimeoutMs: 60_000 },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', after: 'COMPLETED' });
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it('a bound that cancels the run cancels every task with its reason, and no signal is named', async () => {
    fakeClock();
    const scope = Scope.root('run');
    const { orch, final } = setup([task('a'), task('b', { dependsOn: ['a'] })], { a: {} }, {}, { scope });
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    scope.cancel({ kind: 'bound', reason: 'the allocation bound passed' });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    expect(final('a')?.reason).toBe('the allocation bound passed');
    expect(final('b')?.reason).toBe('the allocation bound passed');
    expect(out.signal).toBeUndefined();
  });

  it('a signal that forces a run the deadline is stopping is the signal the run reports', async () => {
    fakeClock();
    const scope = Scope.root('run');
    const { orch, backend } = setup(
      [task('stubborn')],
      { stubborn: {} },
      {},
      { scope, ignoreTerm: true, graceMs: 10_000 },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    scope.cancel({ kind: 'deadline', reason: 'cancelled: workflow.timeout (1s) reached' });
    await vi.advanceTimersByTimeAsync(10);
    orch.requestStop('SIGTERM');
    const out = await runAll(run);
    expect(out.signal).toBe('SIGTERM');
    expect(backend.kills).toContain('stubborn');
  });
});

describe("orchestrator: a resumed session's attempt numbers", () => {
  it('takes over a task at the later of its attempt counts', async () => {
    const { orch, raw } = setup(
      [task('a'), task('b', { dependsOn: ['a'] })],
      { b: { code: 0, ms: 1 } },
      {},
      {
        resume: {
          reused: new Map([['a', { attempt: 3, status: 'COMPLETED' }]]),
          attempts: new Map([['a', 1]]),
        },
      },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', b: 'COMPLETED' });
    expect(ofType(raw, 'task_reused')).toEqual([
      { type: 'task_reused', task: 'a', attempt: 3, status: 'COMPLETED' },
    ]);
  });

  it('a session with every task taken over ends at once, launching nothing', async () => {
    const { orch, backend } = setup(
      [task('a'), task('b', { dependsOn: ['a'] })],
      {},
      {},
      {
        resume: {
          reused: new Map([
            ['a', { attempt: 1, status: 'COMPLETED' }],
            ['b', { attempt: 2, status: 'COMPLETED' }],
          ]),
          attempts: new Map([
            ['a', 1],
            ['b', 2],
          ]),
        },
      },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', b: 'COMPLETED' });
    expect(backend.launches).toEqual([]);
  });

  it('counts a transient start failure from the first attempt of this session', async () => {
    const { orch, backend, events } = setup(
      [task('x', { retries: { count: 1, intervalS: 0, backoff: 1 } })],
      { x: { code: 0, ms: 0 } },
      {},
      { busyLaunches: { x: 1 }, resume: { reused: new Map(), attempts: new Map([['x', 2]]) } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ x: 'COMPLETED' });
    expect(backend.launches.map((l) => l.attempt)).toEqual([4]);
    expect(ofType(events, 'task_retry')).toMatchObject([{ attempt: 3, nextAttempt: 4, total: 4 }]);
  });

  it("waits this session's first retry delay, not one backed off by the earlier attempts", async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [task('x', { retries: { count: 2, intervalS: 1, backoff: 4 } })],
      { x: [{}, {}, { code: 1, ms: 0 }, { code: 0, ms: 0 }] },
      {},
      { resume: { reused: new Map(), attempts: new Map([['x', 2]]) } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ x: 'COMPLETED' });
    expect(ofType(events, 'task_retry')).toMatchObject([{ attempt: 3, delayS: 1, nextAttempt: 4, total: 5 }]);
    const at = backend.launches.map((l) => l.at);
    expect(at[1] - at[0]).toBe(1000);
  });

  it('retries a service that exited before readiness from the first attempt of this session', async () => {
    fakeClock();
    const { orch, backend } = setup(
      [service('svc', { retries: { count: 1, intervalS: 0, backoff: 1 } })],
      { svc: [{}, {}, { code: 1, ms: 5 }, {}] },
      { svc: { readyMs: 20, finalCheck: false } },
      { resume: { reused: new Map(), attempts: new Map([['svc', 2]]) } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY' });
    expect(backend.launches.map((l) => l.attempt)).toEqual([3, 4]);
  });
});

describe('orchestrator: services and their dependents', () => {
  it('a service that exits 0 before readiness is not retried: exit 0 is no failure to retry', async () => {
    const { orch, backend, final } = setup(
      [service('svc', { retries: { count: 2, intervalS: 0, backoff: 1 } })],
      { svc: { code: 0, ms: 5 } },
      { svc: { finalCheck: false } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'FAILED' });
    expect(backend.launches).toHaveLength(1);
    expect(final('svc')?.reason).toBe('service exited before readiness (exit=0)');
  });

  it('a service found ready by the final check is READY by that check', async () => {
    const { orch, events } = setup(
      [service('svc'), task('slow')],
      { svc: { code: 0, ms: 5 }, slow: { code: 0, ms: 30 } },
      {
        svc: { finalCheck: true },
      },
    );
    await orch.run();
    expect(ofType(events, 'task_ready')).toMatchObject([{ task: 'svc', probe: 'final readiness check' }]);
  });

  it('a READY service retried after a failed exit holds the run open until it is READY again', async () => {
    fakeClock();
    const { orch, backend } = setup(
      [
        service('svc', { retries: { count: 1, intervalS: 0, backoff: 1 } }),
        task('client', { dependsOn: ['svc'] }),
      ],
      { svc: [{ code: 1, ms: 20 }, {}], client: { code: 0, ms: 100 } },
      { svc: { readyMs: 10 } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', client: 'COMPLETED' });
    expect(backend.launches.filter((l) => l.task === 'svc')).toHaveLength(2);
  });

  it('a dependency that is READY and then COMPLETED counts once: its dependent still waits for the others', async () => {
    fakeClock();
    const { orch, backend } = setup(
      [service('svc'), task('slow'), task('both', { dependsOn: ['svc', 'slow'] })],
      { svc: { code: 0, ms: 10 }, slow: { code: 0, ms: 50 }, both: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'COMPLETED', slow: 'COMPLETED', both: 'COMPLETED' });
    const at = Object.fromEntries(backend.launches.map((l) => [l.task, l.at]));
    expect(at.both - at.slow).toBe(50);
  });

  it('a failure probe does not fail a task that exited 0 while its results are read', async () => {
    fakeClock();
    const { orch } = setup(
      [task('a', { probes: { readiness: [], failure: [probe('failure')] } })],
      { a: { code: 0, ms: 10 } },
      { a: { failMs: 30 } },
      { finalize: () => new Promise((r) => setTimeout(() => r(undefined), 50)) },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED' });
  });

  it('gives a service past its readiness deadline no exit code: it was still running', async () => {
    const { orch, final } = setup(
      [task('api', { probes: { readiness: [probe('readiness', { timeoutS: 0.02 })], failure: [] } })],
      { api: {} },
    );
    await orch.run();
    expect(final('api')).toMatchObject({ status: 'FAILED', exitCode: null, signal: null });
  });

  it('a finalisation failure while fail-fast waits for it fails the task without a second fail-fast', async () => {
    fakeClock();
    const { orch, events } = setup(
      [task('a'), task('b')],
      { a: { code: 0, ms: 1 }, b: { code: 1, ms: 10 } },
      {},
      {
        finalize: (t) =>
          t.name === 'a'
            ? new Promise((r) => setTimeout(() => r({ kind: 'assertion', reason: 'p99 too high' }), 50))
            : Promise.resolve(undefined),
      },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ a: 'FAILED', b: 'FAILED' });
    expect(ofType(events, 'fail_fast')).toHaveLength(1);
  });
});

describe('orchestrator: what the engine says, less often', () => {
  it('a gated member of a colocated group says what it is gated on when submitted', async () => {
    const gated = task('worker', {
      colocated: { group: 'g', members: ['head', 'worker'], gatedOn: ['head'], launch: [], gpus: 0 },
    });
    const { orch, raw } = setup([gated], { worker: { code: 0, ms: 1 } });
    await orch.run();
    expect(ofType(raw, 'task_submitted')).toEqual([
      { type: 'task_submitted', task: 'worker', attempt: 1, gatedOn: ['head'] },
    ]);
  });

  it('an attempt the engine says exited before it said it ran is started, then finished', async () => {
    fakeClock();
    const { orch, backend, events } = setup([task('quick')], { quick: {} }, {}, { submittedOnly: true });
    const run = orch.run();
    await launched(backend, 'quick');
    backend.emitStatus('quick', { state: 'EXITED', exit: { code: 0, signal: null } });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ quick: 'COMPLETED' });
    expect(events.filter((e) => 'task' in e && e.task === 'quick').map((e) => e.type)).toEqual([
      'task_submitted',
      'task_started',
      'task_finished',
    ]);
  });

  it('a READY service the engine lost fails as lost', async () => {
    fakeClock();
    const { orch, backend, final, events } = setup(
      [service('svc'), task('client', { dependsOn: ['svc'] })],
      { svc: {}, client: {} },
      { svc: { readyMs: 5 } },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    expect(orch.status('svc')).toBe('READY');
    backend.emitStatus('svc', { state: 'EXITED', error: 'the node went away' });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ svc: 'FAILED', client: 'CANCELLED' });
    expect(final('svc')).toMatchObject({ reason: 'the node went away' });
    expect(ofType(events, 'fail_fast')[0]?.message).toBe(
      'Fail-fast: lost track of the task: svc. Cancelling remaining tasks.',
    );
  });

  it('a handle born running with no submission time carries no start time of its own', async () => {
    fakeClock();
    const { orch, raw } = setup([task('a')], { a: { code: 0, ms: 1 } });
    await runAll(orch.run());
    const started = ofType(raw, 'task_started');
    expect(started).toHaveLength(1);
    expect(Object.hasOwn(started[0], 'at')).toBe(false);
  });

  it("a retry carries the engine's end of the failed attempt only when the engine gave a finite one", async () => {
    fakeClock();
    const { orch, backend, raw } = setup(
      [task('a', { retries: { count: 2, intervalS: 0, backoff: 1 } })],
      { a: {} },
      {},
      { submittedOnly: true },
    );
    const run = orch.run();
    await launched(backend, 'a');
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 1, signal: null }, endedAt: Number.NaN });
    await launched(backend, 'a', 2);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 1, signal: null }, endedAt: 9_000 }, 2);
    await launched(backend, 'a', 3);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 0, signal: null } }, 3);
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED' });
    const retries = ofType(raw, 'task_retry');
    expect(retries).toHaveLength(2);
    expect(Object.hasOwn(retries[0], 'at')).toBe(false);
    expect(retries[1].at).toBe(9_000);
  });

  it('a new name the engine gives an attempt is announced', async () => {
    fakeClock();
    const { orch, backend, raw } = setup([task('a')], { a: {} }, {}, { submittedOnly: true });
    const run = orch.run();
    await launched(backend, 'a');
    backend.emitStatus('a', {
      state: 'RUNNING',
      named: { engine: { kind: 'local', container: 'renamed-7' }, remoteIds: ['renamed-7'] },
    });
    await vi.advanceTimersByTimeAsync(1);
    backend.exitNow('a', 0);
    await runAll(run);
    const named = ofType(raw, 'task_handle');
    expect(named).toHaveLength(1);
    expect(named[0].handle.remoteIds).toEqual(['renamed-7']);
  });

  it("a probe runs through the backend's transport when it has one", async () => {
    const { orch, backend, probes } = setup([service('svc')], { svc: {} }, { svc: { readyMs: 1 } });
    const transport = { kind: 'test-transport' } as unknown as ProbeTransport;
    Object.assign(backend, { probeTransport: () => transport });
    await orch.run();
    expect(probes.contexts.map((c) => c.transport)).toEqual([transport]);
  });
});

describe('orchestrator: a probe verdict that comes too late', () => {
  it('is not reported for a task that already completed, while the run goes on', async () => {
    fakeClock();
    const { orch, events } = setup(
      [task('a', { probes: { readiness: [], failure: [probe('failure')] } }), task('other')],
      { a: { code: 0, ms: 10 }, other: { code: 0, ms: 60 } },
      { a: { failMs: 30, ignoreStop: true } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', other: 'COMPLETED' });
    const finished = events.findIndex((e) => e.type === 'task_finished' && e.task === 'a');
    expect(finished).toBeGreaterThan(-1);
    expect(events.slice(finished).filter((e) => e.type === 'probe_result')).toEqual([]);
  });

  it('of an earlier attempt does not make the next one READY', async () => {
    fakeClock();
    const t0 = Date.now();
    const { orch, events } = setup(
      [service('svc', { retries: { count: 1, intervalS: 0, backoff: 1 } })],
      { svc: [{ code: 1, ms: 10 }, {}] },
      { svc: { readyMs: 30, ignoreStop: true, finalCheck: false } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY' });
    // attempt 1's verdict comes at 30, attempt 2's (started at 10) at 40
    expect(ofType(events, 'task_ready')).toMatchObject([{ attempt: 2 }]);
    expect(events.find((e) => e.type === 'task_ready')!.at - t0).toBe(40);
  });

  it('does not fail a READY service once the run has ended', async () => {
    fakeClock();
    const { orch, events } = setup(
      [
        task('svc', { probes: { readiness: [probe('readiness')], failure: [probe('failure')] } }),
        task('job'),
      ],
      { svc: {}, job: { code: 0, ms: 20 } },
      { svc: { readyMs: 5, failMs: 50, ignoreStop: true } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', job: 'COMPLETED' });
    expect(orch.status('svc')).toBe('READY');
    expect(ofType(events, 'fail_fast')).toEqual([]);
    expect(ofType(events, 'task_finished').map((e) => e.task)).toEqual(['job']);
  });

  it('an earlier attempt the engine says is running does not start the next one, still queued', async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [task('a', { retries: { count: 1, intervalS: 0, backoff: 1 } })],
      { a: {} },
      {},
      { submittedOnly: true },
    );
    const run = orch.run();
    await launched(backend, 'a');
    backend.emitStatus('a', { state: 'RUNNING' }, 1);
    await vi.advanceTimersByTimeAsync(1);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 1, signal: null } }, 1);
    await launched(backend, 'a', 2);
    expect(orch.status('a')).toBe('SUBMITTED');
    // a late word about attempt 1: attempt 2 still waits in the queue
    backend.emitStatus('a', { state: 'RUNNING' }, 1);
    await vi.advanceTimersByTimeAsync(1);
    expect(orch.status('a')).toBe('SUBMITTED');
    expect(ofType(events, 'task_started').map((e) => e.attempt)).toEqual([1]);
    backend.emitStatus('a', { state: 'RUNNING' }, 2);
    await vi.advanceTimersByTimeAsync(1);
    backend.exitNow('a', 0, 2);
    expect(statusMap((await runAll(run)).statuses)).toEqual({ a: 'COMPLETED' });
    expect(ofType(events, 'task_started').map((e) => e.attempt)).toEqual([1, 2]);
  });
});

describe('orchestrator: a retried task failed while running', () => {
  const retried = (probes: { readiness: ReturnType<typeof probe>[]; failure: ReturnType<typeof probe>[] }) =>
    task('svc', { retries: { count: 1, intervalS: 0, backoff: 1 }, probes });

  it.each([
    ['its failure probe', { readiness: [], failure: [probe('failure')] }, { failMs: 20 }],
    ['its readiness deadline', { readiness: [probe('readiness', { timeoutS: 0.02 })], failure: [] }, {}],
    ['a probe that cannot run', { readiness: [probe('readiness')], failure: [] }, { limitMs: 20 }],
  ])('by %s reports no exit code, not the first attempt’s', async (_what, probes, script) => {
    fakeClock();
    const { orch, backend, final } = setup(
      [retried(probes)],
      { svc: [{ code: 3, ms: 5 }, {}] },
      {
        svc: { ...script, finalCheck: false },
      },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'FAILED' });
    expect(backend.launches).toHaveLength(2);
    expect(final('svc')).toMatchObject({ attempt: 2, exitCode: null, signal: null });
  });
});

describe("orchestrator: the run's handle ledger", () => {
  it('records the handle of a backend that leaves recording to its caller, once', async () => {
    const { orch, ledger } = setup([task('a')], { a: { code: 0, ms: 1 } }, {}, { noRecord: true });
    await orch.run();
    expect(ledger.filter((l) => l.startsWith('launched '))).toEqual(['launched a#1']);
    expect(ledger).toContain('ended a#1');
  });
});
