import { afterEach, describe, expect, it, vi } from 'vitest';
import { Orchestrator, type RunEventInput } from '../../../src/runtime/orchestrator.js';
import { computeVerdict } from '../../../src/runtime/verdict.js';
import { FakeBackend, FakeProbes, plan, probe, task } from './fakes.js';
import { Scope } from '../../../src/runtime/scope.js';
import { fakeClock, launched, runAll, setup, statusMap } from './orchestrator-setup.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('orchestrator: dependencies', () => {
  it('runs a diamond in dependency order and completes', async () => {
    const { orch, backend } = setup(
      [
        task('a'),
        task('b', { dependsOn: ['a'] }),
        task('c', { dependsOn: ['a'] }),
        task('d', { dependsOn: ['b', 'c'] }),
      ],
      { a: { code: 0, ms: 5 }, b: { code: 0, ms: 10 }, c: { code: 0, ms: 1 }, d: { code: 0, ms: 1 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({
      a: 'COMPLETED',
      b: 'COMPLETED',
      c: 'COMPLETED',
      d: 'COMPLETED',
    });
    const order = backend.launches.map((l) => l.task);
    expect(order[0]).toBe('a');
    expect(order[3]).toBe('d');
    expect(computeVerdict('wf', out.statuses)).toEqual({
      status: 'COMPLETED',
      exitCode: 0,
      message: 'Workflow completed',
    });
  });

  it('passes inherited env plus task env (task wins)', async () => {
    const { orch, backend } = setup([task('a', { env: { SHADOWED: 'task', SFLOW_REPLICA_INDEX: '0' } })], {});
    await orch.run();
    expect(backend.launches[0].env).toMatchObject({
      INHERITED: 'yes',
      SHADOWED: 'task',
      SFLOW_REPLICA_INDEX: '0',
    });
  });

  it('starts independent tasks at once, and a dependent right after its dependency completes', async () => {
    fakeClock();
    const { orch, backend } = setup([task('a'), task('b'), task('c', { dependsOn: ['a'] })], {
      a: { code: 0, ms: 30 },
      b: { code: 0, ms: 30 },
      c: { code: 0, ms: 0 },
    });
    await runAll(orch.run());
    const at = Object.fromEntries(backend.launches.map((l) => [l.task, l.at]));
    expect(at.b).toBe(at.a);
    expect(at.c - at.a).toBe(30);
  });

  it('a 200-task chain is event driven (no tick)', async () => {
    fakeClock();
    const tasks = Array.from({ length: 200 }, (_, i) => task(`t${i}`, { dependsOn: i ? [`t${i - 1}`] : [] }));
    const { orch } = setup(tasks, {});
    const t0 = Date.now();
    const out = await runAll(orch.run());
    expect(out.statuses.every(([, s]) => s === 'COMPLETED')).toBe(true);
    expect(Date.now() - t0).toBe(0); // no virtual time passes: a 1 s tick would need 200 s
  });
});

describe('orchestrator: retries', () => {
  it('retries with interval × backoff^(k-1) and succeeds', async () => {
    const { orch, backend, events } = setup(
      [task('flaky', { retries: { count: 3, intervalS: 0.05, backoff: 2 } })],
      {
        flaky: [
          { code: 1, ms: 0 },
          { code: 1, ms: 0 },
          { code: 0, ms: 0 },
        ],
      },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ flaky: 'COMPLETED' });
    const at = backend.launches.map((l) => l.at);
    expect(at).toHaveLength(3);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(45);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(95);
    const retries = events.filter((e) => e.type === 'task_retry');
    expect(
      retries.map((r) => r.type === 'task_retry' && [r.attempt, r.delayS, r.nextAttempt, r.total]),
    ).toEqual([
      [1, 0.05, 2, 4],
      [2, 0.1, 3, 4],
    ]);
  });

  it('fails after the last attempt; dependents are cancelled; verdict names the task', async () => {
    const { orch, backend, final } = setup(
      [
        task('flaky', { retries: { count: 1, intervalS: 0, backoff: 1 } }),
        task('done', { dependsOn: ['flaky'] }),
      ],
      { flaky: { code: 3, ms: 0 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ flaky: 'FAILED', done: 'CANCELLED' });
    expect(backend.launches.filter((l) => l.task === 'flaky')).toHaveLength(2);
    expect(final('flaky')).toMatchObject({
      exitCode: 3,
      reason: 'process exited with error (exit=3)',
      attempt: 2,
    });
    expect(final('done')).toMatchObject({ attempt: 0, status: 'CANCELLED' });
    expect(computeVerdict('wf', out.statuses).message).toBe("Workflow 'wf' failed: 1 task(s) failed (flaky)");
  });

  it('a task that cannot start fails without retry', async () => {
    const { orch, final } = setup(
      [task('x', { retries: { count: 3, intervalS: 0, backoff: 1 } })],
      {},
      {},
      { failLaunch: ['x'] },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ x: 'FAILED' });
    expect(final('x')?.reason).toMatch(/could not start/);
  });

  it('a transient start failure (ETXTBSY) is retried under the task retry policy', async () => {
    const { orch, backend, events } = setup(
      [task('x', { retries: { count: 2, intervalS: 0, backoff: 1 } })],
      { x: { code: 0, ms: 0 } },
      {},
      { busyLaunches: { x: 1 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ x: 'COMPLETED' });
    expect(backend.launches.filter((l) => l.task === 'x')).toHaveLength(1);
    const retries = events.filter((e) => e.type === 'task_retry');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, nextAttempt: 2, exitCode: null });
    expect(retries[0].type === 'task_retry' && retries[0].reason).toMatch(
      /could not start: .*text file busy/,
    );
  });

  it('a transient start failure without retries left fails the task as a launch failure', async () => {
    const { orch, final } = setup(
      [task('x', { retries: { count: 1, intervalS: 0, backoff: 1 } })],
      {},
      {},
      { busyLaunches: { x: 5 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ x: 'FAILED' });
    expect(final('x')).toMatchObject({ attempt: 2 });
    expect(final('x')?.reason).toMatch(/could not start: .*text file busy/);
  });
});

describe('orchestrator: fail-fast', () => {
  it('cancels running, waiting and READY tasks and stops their processes', async () => {
    const { orch, backend, events, final } = setup(
      [
        task('svc', { probes: { readiness: [probe('readiness')], failure: [] } }),
        task('bad', { dependsOn: ['svc'] }),
        task('independent'),
        task('after', { dependsOn: ['bad'] }),
      ],
      { svc: {}, bad: { code: 2, ms: 20 }, independent: {} },
      { svc: { readyMs: 5 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({
      svc: 'CANCELLED',
      bad: 'FAILED',
      independent: 'CANCELLED',
      after: 'CANCELLED',
    });
    expect(backend.alive('svc')).toBe(false);
    expect(backend.alive('independent')).toBe(false);
    expect(backend.stops.sort()).toEqual(['independent', 'svc']);
    const ff = events.find((e) => e.type === 'fail_fast');
    expect(ff && ff.type === 'fail_fast' && ff.message).toBe(
      'Fail-fast: process exited with error: bad. Cancelling remaining tasks.',
    );
    expect(final('svc')?.reason).toMatch(/fail-fast \(bad failed\)/);
    expect(computeVerdict('wf', out.statuses).exitCode).toBe(1);
  });

  it('a failure probe fails a READY service whose process is still running', async () => {
    const { orch, backend, events, final } = setup(
      [
        task('server', {
          probes: {
            readiness: [probe('readiness')],
            failure: [probe('failure', { kind: 'log_watch', pattern: 'Traceback' })],
          },
        }),
        task('bench', { dependsOn: ['server'] }),
        task('never', { dependsOn: ['bench'] }),
      ],
      { server: {}, bench: {} },
      { server: { readyMs: 5, failMs: 40 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ server: 'FAILED', bench: 'CANCELLED', never: 'CANCELLED' });
    expect(final('server')?.reason).toMatch(
      /^failure probe terminated: log_watch "Traceback" fired .*still running/,
    );
    expect(final('server')?.exitCode).toBeNull();
    expect(backend.alive('server')).toBe(false); // stopped by fail-fast
    const ff = events.find((e) => e.type === 'fail_fast');
    expect(ff && ff.type === 'fail_fast' && ff.message).toBe(
      'Fail-fast: failure probe terminated: server. Cancelling remaining tasks.',
    );
    expect(events.some((e) => e.type === 'probe_result' && e.role === 'failure' && !e.ok)).toBe(true);
  });
});

describe('orchestrator: services', () => {
  it('dependents start when the service is READY; services are stopped at the end and stay READY', async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [
        task('api', { probes: { readiness: [probe('readiness')], failure: [] } }),
        task('client', { dependsOn: ['api'] }),
      ],
      { api: {}, client: { code: 0, ms: 5 } },
      { api: { readyMs: 30 } },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ api: 'READY', client: 'COMPLETED' });
    const ready = events.find((e) => e.type === 'task_ready')!;
    const client = backend.launches.find((l) => l.task === 'client')!;
    expect(client.at).toBe(ready.at);
    expect(backend.alive('api')).toBe(false);
    expect(events.some((e) => e.type === 'task_stopped' && e.task === 'api' && e.why === 'teardown')).toBe(
      true,
    );
    expect(computeVerdict('wf', out.statuses).exitCode).toBe(0);
  });

  it('needs every readiness probe to pass', async () => {
    const { orch, events } = setup(
      [
        task('svc', {
          probes: {
            readiness: [probe('readiness'), probe('readiness', { kind: 'http_get', url: 'http://x' })],
            failure: [],
          },
        }),
      ],
      { svc: {} },
      { svc: { readyMs: 10 } },
    );
    await orch.run();
    const checks = events.filter((e) => e.type === 'probe_result');
    const ready = events.findIndex((e) => e.type === 'task_ready');
    expect(checks).toHaveLength(2);
    expect(ready).toBeGreaterThan(events.indexOf(checks[1]));
  });

  it('a service exiting 0 before readiness is FAILED after a final check', async () => {
    const { orch, final } = setup(
      [
        task('svc', { probes: { readiness: [probe('readiness')], failure: [] } }),
        task('dep', { dependsOn: ['svc'] }),
      ],
      { svc: { code: 0, ms: 10 } },
      { svc: { finalCheck: false } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'FAILED', dep: 'CANCELLED' });
    expect(final('svc')?.reason).toBe('service exited before readiness (exit=0)');
  });

  it('a service that became ready just before exiting is not misreported', async () => {
    const { orch } = setup(
      [
        task('svc', { probes: { readiness: [probe('readiness')], failure: [] } }),
        task('dep', { dependsOn: ['svc'] }),
      ],
      { svc: { code: 0, ms: 10 } },
      { svc: { finalCheck: true } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'COMPLETED', dep: 'COMPLETED' });
  });

  it('the readiness deadline fails the task naming the probe and the time waited', async () => {
    const { orch, final } = setup(
      [
        task('api', {
          probes: { readiness: [probe('readiness', { port: 18082, timeoutS: 0.05 })], failure: [] },
        }),
        task('client', { dependsOn: ['api'] }),
      ],
      { api: {} },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ api: 'FAILED', client: 'CANCELLED' });
    expect(final('api')?.reason).toMatch(
      /^readiness probe tcp_port 127\.0\.0\.1:18082 not ready after 0\.1s/,
    );
  });

  it('a READY service exiting 0 becomes COMPLETED', async () => {
    const { orch } = setup(
      [task('svc', { probes: { readiness: [probe('readiness')], failure: [] } }), task('slow')],
      { svc: { code: 0, ms: 30 }, slow: { code: 0, ms: 80 } },
      { svc: { readyMs: 5 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'COMPLETED', slow: 'COMPLETED' });
  });

  it('probes are reset on retry and stopped at the end', async () => {
    const { orch, probes } = setup(
      [
        task('svc', {
          retries: { count: 1, intervalS: 0, backoff: 1 },
          probes: { readiness: [probe('readiness')], failure: [probe('failure')] },
        }),
      ],
      { svc: [{ code: 1, ms: 5 }, {}] },
      { svc: { readyMs: 20 } },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY' });
    expect(probes.started.filter((s) => s.role === 'readiness')).toHaveLength(2);
    expect(probes.active).toBe(0);
  });
});

describe('orchestrator: signals', () => {
  it('first signal cancels everything, verdict is 130', async () => {
    const { orch, backend } = setup([task('a'), task('b', { dependsOn: ['a'] })], { a: {} });
    const run = orch.run();
    await new Promise((r) => setTimeout(r, 10));
    orch.requestStop('SIGINT');
    const out = await run;
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    expect(out.signal).toBe('SIGINT');
    expect(backend.alive('a')).toBe(false);
    const v = computeVerdict('wf', out.statuses, out.signal);
    expect(v).toMatchObject({ status: 'CANCELLED', exitCode: 130 });
    expect(v.message).toBe("Workflow 'wf' cancelled: 2 task(s) cancelled (a, b)");
    expect(computeVerdict('wf', out.statuses, 'SIGTERM').exitCode).toBe(143);
  });

  it('a second signal kills at once when TERM is ignored', async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [task('stubborn')],
      { stubborn: {} },
      {},
      { ignoreTerm: true, graceMs: 10_000 },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    const t0 = Date.now();
    orch.requestStop('SIGINT');
    await vi.advanceTimersByTimeAsync(20);
    orch.requestStop('SIGINT');
    await runAll(run);
    expect(Date.now() - t0).toBeLessThan(10_000); // did not sit out the 10 s grace period
    expect(backend.kills).toEqual(['stubborn']);
    expect(events.filter((e) => e.type === 'signal')).toHaveLength(2);
  });

  it('a signal before the run starts (during allocation) cancels everything, nothing is launched', async () => {
    const { orch, backend } = setup([task('a'), task('b', { dependsOn: ['a'] })], { a: {} });
    orch.requestStop('SIGINT');
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    expect(backend.launches).toEqual([]);
    expect(out.signal).toBe('SIGINT');
  });

  it("the run's scope: a deadline cancels the run with its reason, no signal exit", async () => {
    const scope = Scope.root('run');
    const { orch, backend, final } = setup(
      [task('a'), task('b', { dependsOn: ['a'] })],
      { a: {} },
      {},
      { scope },
    );
    const run = orch.run();
    await new Promise((r) => setTimeout(r, 10));
    expect(scope.cancel({ kind: 'deadline', reason: 'cancelled: workflow.timeout (1s) reached' })).toBe(true);
    const out = await run;
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    expect(final('b')?.reason).toBe('cancelled: workflow.timeout (1s) reached');
    expect(out.signal).toBeUndefined();
    expect(backend.alive('a')).toBe(false);
  });

  it("fail-fast cancels the run's scope with its cause; a deadline after it changes nothing", async () => {
    const scope = Scope.root('run');
    const { orch } = setup([task('bad'), task('slow')], { bad: { code: 3, ms: 0 }, slow: {} }, {}, { scope });
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ bad: 'FAILED', slow: 'CANCELLED' });
    expect(scope.cause).toEqual({ kind: 'fail_fast', reason: 'cancelled by fail-fast (bad failed)' });
    expect(scope.cancel({ kind: 'deadline', reason: 'late' })).toBe(false);
  });

  it('a run that ends on its own ends its scope: a later deadline does not cancel it', async () => {
    const scope = Scope.root('run');
    const { orch } = setup([task('a')], { a: { code: 0, ms: 0 } }, {}, { scope });
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED' });
    expect(scope.cause).toEqual({ kind: 'end' });
    expect(scope.cancel({ kind: 'deadline', reason: 'late' })).toBe(false);
    expect(scope.signal.aborted).toBe(false);
  });

  it('a pending retry is cancelled by a signal', async () => {
    const { orch, backend } = setup([task('r', { retries: { count: 5, intervalS: 10, backoff: 1 } })], {
      r: { code: 1, ms: 0 },
    });
    const run = orch.run();
    await new Promise((r) => setTimeout(r, 20));
    orch.requestStop('SIGTERM');
    const out = await run;
    expect(statusMap(out.statuses)).toEqual({ r: 'CANCELLED' });
    expect(backend.launches).toHaveLength(1);
  });
});

describe('orchestrator: finalize', () => {
  it('a dependent starts only after finalisation of its dependency', async () => {
    let finalized = 0;
    const backend = new FakeBackend({});
    const orch = new Orchestrator({
      plan: plan([task('a'), task('b', { dependsOn: ['a'] })]),
      backends: new Map([['local', backend]]),
      probes: new FakeProbes({}),
      emit: () => undefined,
      cwd: '/',
      finalize: async (t) => {
        await new Promise((r) => setTimeout(r, 30));
        if (t.name === 'a') finalized = Date.now();
      },
    });
    await orch.run();
    const b = backend.launches.find((l) => l.task === 'b')!;
    expect(finalized).toBeGreaterThan(0);
    expect(b.at).toBeGreaterThanOrEqual(finalized);
  });
});

describe("orchestrator: the backend's taskReady", () => {
  const service = () => [
    task('svc', { probes: { readiness: [probe('readiness')], failure: [] } }),
    task('after', { dependsOn: ['svc'] }),
  ];
  const warnings = (events: RunEventInput[]) =>
    events.flatMap((e) => (e.type === 'log' && e.level === 'warning' ? [e.message] : []));

  it('is called once per READY attempt with a live signal; the run goes on', async () => {
    const calls: Array<{ task: string; attempt: number; aborted: boolean }> = [];
    const { orch, events } = setup(
      service(),
      { svc: {}, after: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
      {
        taskReady: async (h, signal) => {
          calls.push({ task: h.task, attempt: h.attempt, aborted: signal.aborted });
        },
      },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', after: 'COMPLETED' });
    expect(calls).toEqual([{ task: 'svc', attempt: 1, aborted: false }]);
    expect(warnings(events)).toEqual([]);
  });

  it('a rejection is a warning naming the task; the task stays READY', async () => {
    const { orch, events } = setup(
      service(),
      { svc: {}, after: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
      { taskReady: () => Promise.reject(new Error('registry busy')) },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', after: 'COMPLETED' });
    expect(warnings(events)).toEqual([
      "Task 'svc': giving back what it held until READY failed: registry busy",
    ]);
  });

  it('a synchronous throw is reported the same way', async () => {
    const { orch, events } = setup(
      service(),
      { svc: {}, after: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
      {
        taskReady: () => {
          throw new Error('boom');
        },
      },
    );
    await orch.run();
    expect(warnings(events)).toEqual(["Task 'svc': giving back what it held until READY failed: boom"]);
  });

  it('a call that never settles is bounded: its signal aborts, the run ends, a warning says so', async () => {
    fakeClock();
    let seen: AbortSignal | undefined;
    const { orch, events } = setup(
      service(),
      { svc: {}, after: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
      {
        taskReadyTimeoutMs: 50,
        taskReady: (_h, signal) => {
          seen = signal;
          return new Promise<void>(() => {}); // ignores its signal: the orchestrator must not wait on it
        },
      },
    );
    const out = await runAll(orch.run());
    expect(statusMap(out.statuses)).toEqual({ svc: 'READY', after: 'COMPLETED' });
    expect(seen?.aborted).toBe(true);
    expect(warnings(events)).toEqual([
      "Task 'svc': giving back what it held until READY failed: taskReady did not finish within 0.05 s; given up",
    ]);
  });

  it('the teardown waits for a call in flight before it stops the attempts', async () => {
    fakeClock();
    const order: string[] = [];
    const { orch, backend } = setup(
      service(),
      { svc: {}, after: { code: 0, ms: 1 } },
      { svc: { readyMs: 5 } },
      {
        taskReady: () =>
          new Promise<void>((r) =>
            setTimeout(() => {
              order.push('taskReady done');
              r();
            }, 20),
          ),
      },
    );
    const stop = backend.stop.bind(backend);
    backend.stop = (...a) => {
      order.push('stop');
      return stop(...a);
    };
    await runAll(orch.run());
    expect(order).toEqual(['taskReady done', 'stop']);
  });
});

describe('orchestrator: what the engine says', () => {
  it("takes the engine's start and end of an attempt for its events, and only finite ones", async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [task('a'), task('b')],
      { a: {}, b: {} },
      {},
      { submittedOnly: true },
    );
    const run = orch.run();
    await launched(backend, 'a');
    await launched(backend, 'b');
    expect(events.some((e) => e.type === 'task_started')).toBe(false);
    backend.emitStatus('a', { state: 'RUNNING', startedAt: 5_000 });
    backend.emitStatus('b', { state: 'RUNNING', startedAt: Number.NaN });
    await vi.advanceTimersByTimeAsync(1);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 0, signal: null }, endedAt: 7_000 });
    backend.emitStatus('b', {
      state: 'EXITED',
      exit: { code: 0, signal: null },
      endedAt: Number.POSITIVE_INFINITY,
    });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', b: 'COMPLETED' });
    const given = (type: string, t: string) =>
      events.find((e) => e.type === type && 'task' in e && e.task === t)?.given;
    expect(given('task_started', 'a')).toBe(5_000);
    expect(given('task_finished', 'a')).toBe(7_000);
    expect(given('task_started', 'b')).toBeUndefined();
    expect(given('task_finished', 'b')).toBeUndefined();
  });

  it('starts an attempt born running at its submission time', async () => {
    fakeClock();
    const { orch, events } = setup(
      [task('a')],
      { a: { code: 0, ms: 5 } },
      {},
      { submittedAt: '2026-12-01T00:00:00.000Z' },
    );
    await runAll(orch.run());
    expect(events.find((e) => e.type === 'task_started')?.given).toBe(Date.parse('2026-12-01T00:00:00.000Z'));
  });

  it('fails an attempt the engine lost without an exit before it started', async () => {
    fakeClock();
    const { orch, backend, final, events } = setup(
      [task('early')],
      { early: {} },
      {},
      { submittedOnly: true },
    );
    const run = orch.run();
    await launched(backend, 'early');
    backend.emitStatus('early', { state: 'EXITED', error: 'the pod could not be scheduled' });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ early: 'FAILED' });
    expect(final('early')).toMatchObject({ status: 'FAILED', reason: 'the pod could not be scheduled' });
    expect(events.find((e) => e.type === 'fail_fast')).toMatchObject({
      message: 'Fail-fast: process could not start: early. Cancelling remaining tasks.',
    });
  });

  it('fails an attempt the engine lost once it ran, and cancels its dependents', async () => {
    fakeClock();
    const { orch, backend, final, events } = setup(
      [task('late'), task('after', { dependsOn: ['late'] })],
      { late: {} },
      {},
      { submittedOnly: true },
    );
    const run = orch.run();
    await launched(backend, 'late');
    backend.emitStatus('late', { state: 'RUNNING' });
    await vi.advanceTimersByTimeAsync(1);
    expect(events.some((e) => e.type === 'task_started')).toBe(true);
    backend.emitStatus('late', { state: 'EXITED', error: 'the node went away' });
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ late: 'FAILED', after: 'CANCELLED' });
    expect(final('late')).toMatchObject({ status: 'FAILED', reason: 'the node went away' });
    expect(events.find((e) => e.type === 'fail_fast')).toMatchObject({
      message: 'Fail-fast: lost track of the task: late. Cancelling remaining tasks.',
    });
    expect(backend.launches.map((l) => l.task)).toEqual(['late']);
  });

  it('ignores what the engine says about an attempt that is not the current one', async () => {
    fakeClock();
    const { orch, backend } = setup([task('a', { retries: { count: 1, intervalS: 0, backoff: 1 } })], {
      a: [{ code: 1, ms: 5 }, {}],
    });
    const run = orch.run();
    await launched(backend, 'a', 2);
    // the first attempt, long gone, "exits" again: the second goes on
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 0, signal: null } }, 1);
    await vi.advanceTimersByTimeAsync(5);
    expect(orch.status('a')).toBe('RUNNING');
    backend.exitNow('a', 0, 2);
    expect(statusMap((await runAll(run)).statuses)).toEqual({ a: 'COMPLETED' });
  });

  it("makes the folders of a task's dependents while it runs; a failure there is its dependent's", async () => {
    fakeClock();
    const made: string[] = [];
    const { orch, final } = setup(
      [task('a'), task('b', { dependsOn: ['a'] }), task('c', { dependsOn: ['b'] })],
      { a: { code: 0, ms: 5 }, b: { code: 0, ms: 5 }, c: { code: 0, ms: 5 } },
      {},
      {
        taskFolder: (t) => {
          made.push(t);
          if (t === 'c') throw new Error("cannot make c's folder");
        },
      },
    );
    const out = await runAll(orch.run());
    // b's folder is made while a runs, before b launches; c's attempt at b's launch fails quietly
    expect(made.slice(0, 3)).toEqual(['a', 'b', 'b']);
    expect(made).toContain('c');
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', b: 'COMPLETED', c: 'FAILED' });
    expect(final('c')?.reason).toContain("cannot make c's folder");
  });

  it('numbers the stop requests in its signal events', async () => {
    fakeClock();
    const { orch, events } = setup(
      [task('stubborn')],
      { stubborn: {} },
      {},
      { ignoreTerm: true, graceMs: 10_000 },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(10);
    orch.requestStop('SIGTERM');
    await vi.advanceTimersByTimeAsync(10);
    orch.requestStop('SIGINT');
    await runAll(run);
    expect(events.filter((e) => e.type === 'signal').map((e) => [e.signal, e.count])).toEqual([
      ['SIGTERM', 1],
      ['SIGINT', 2],
    ]);
  });
});

describe('orchestrator: exits, retries and failures in detail', () => {
  it('names the signal, or says it does not know, when a failed exit has no code', async () => {
    fakeClock();
    const exitWith = async (signal: string | null) => {
      const { orch, backend, final } = setup([task('a')], { a: {} });
      const run = orch.run();
      await vi.advanceTimersByTimeAsync(1);
      backend.emitStatus('a', { state: 'EXITED', exit: { code: null, signal } });
      await runAll(run);
      return final('a');
    };
    expect(await exitWith('SIGKILL')).toMatchObject({
      status: 'FAILED',
      reason: 'process exited with error (exit=signal SIGKILL)',
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect((await exitWith(null))?.reason).toBe('process exited with error (exit=unknown)');
  });

  it('reports an exit 0 with its code, and an exit code with the failure', async () => {
    fakeClock();
    const { orch, final, events } = setup([task('ok'), task('bad', { dependsOn: ['ok'] })], {
      ok: { code: 0, ms: 1 },
      bad: { code: 3, ms: 1 },
    });
    await runAll(orch.run());
    expect(final('ok')).toMatchObject({ status: 'COMPLETED', exitCode: 0, signal: null });
    expect(final('bad')).toMatchObject({ status: 'FAILED', exitCode: 3 });
    expect(events.find((e) => e.type === 'fail_fast')).toMatchObject({
      message: 'Fail-fast: process exited with error: bad. Cancelling remaining tasks.',
    });
  });

  it("carries the engine's end, the delay and the attempt numbers in a retry", async () => {
    fakeClock();
    const { orch, backend, events } = setup(
      [task('a', { retries: { count: 2, intervalS: 3, backoff: 2 } })],
      { a: [{}, {}, { code: 0, ms: 1 }] },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(1);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 7, signal: null }, endedAt: 42_000 }, 1);
    await vi.advanceTimersByTimeAsync(3_001);
    backend.emitStatus('a', { state: 'EXITED', exit: { code: 8, signal: null } }, 2);
    await runAll(run);
    const retries = events.filter((e) => e.type === 'task_retry');
    expect(retries.map((e) => [e.attempt, e.exitCode, e.delayS, e.nextAttempt, e.total, e.given])).toEqual([
      [1, 7, 3, 2, 3, 42_000],
      [2, 8, 6, 3, 3, undefined],
    ]);
  });

  it('completes a task whose finalisation throws, with a warning naming it', async () => {
    const { orch, final, events } = setup(
      [task('a')],
      { a: { code: 0, ms: 1 } },
      {},
      {
        finalize: () => Promise.reject(new Error('disk full')),
      },
    );
    await orch.run();
    expect(final('a')?.status).toBe('COMPLETED');
    expect(events.filter((e) => e.type === 'log').map((e) => e.message)).toContain(
      "Task 'a': finalisation failed: disk full",
    );
  });

  it('fails a task whose finalisation finds a failure, with its kind and reason', async () => {
    const { orch, final, events } = setup(
      [task('a'), task('b', { dependsOn: ['a'] })],
      { a: { code: 0, ms: 1 } },
      {},
      { finalize: () => Promise.resolve({ kind: 'assertion', reason: 'throughput 3 < 5' }) },
    );
    const out = await orch.run();
    expect(statusMap(out.statuses)).toEqual({ a: 'FAILED', b: 'CANCELLED' });
    expect(final('a')).toMatchObject({ status: 'FAILED', reason: 'throughput 3 < 5', exitCode: 0 });
    expect(events.find((e) => e.type === 'fail_fast')).toMatchObject({
      message: 'Fail-fast: result assertion failed: a. Cancelling remaining tasks.',
    });
  });

  it('gives a service failed by its probe no exit code: it was still running', async () => {
    const { orch, final } = setup(
      [task('svc', { probes: { readiness: [], failure: [probe('failure')] } })],
      { svc: {} },
      { svc: { failMs: 5 } },
    );
    await orch.run();
    expect(final('svc')).toMatchObject({ status: 'FAILED', exitCode: null, signal: null });
  });

  it('fail-fast lets a task that exited 0 finish its finalisation, and waits for it', async () => {
    fakeClock();
    let finished = false;
    const { orch, final } = setup(
      [task('a'), task('b'), task('c', { dependsOn: ['a'] })],
      { a: { code: 0, ms: 1 }, b: { code: 1, ms: 10 } },
      {},
      {
        finalize: (t) =>
          t.name === 'a'
            ? new Promise((r) =>
                setTimeout(() => {
                  finished = true;
                  r(undefined);
                }, 50),
              )
            : Promise.resolve(undefined),
      },
    );
    const out = await runAll(orch.run());
    expect(finished).toBe(true);
    expect(statusMap(out.statuses)).toEqual({ a: 'COMPLETED', b: 'FAILED', c: 'CANCELLED' });
    expect(final('c')?.reason).toBe('cancelled by fail-fast (b failed)');
  });

  it('a signal cancels a task in its finalisation: its uploads are told why, its exit is not reported', async () => {
    fakeClock();
    let why: unknown;
    const { orch, final } = setup(
      [task('a'), task('b')],
      { a: { code: 0, ms: 1 }, b: {} },
      {},
      {
        finalize: (_t, cancelled) =>
          new Promise((r) =>
            cancelled.addEventListener('abort', () => {
              why = cancelled.reason;
              r(undefined);
            }),
          ),
      },
    );
    const run = orch.run();
    await vi.advanceTimersByTimeAsync(5);
    orch.requestStop('SIGINT');
    const out = await runAll(run);
    expect(statusMap(out.statuses)).toEqual({ a: 'CANCELLED', b: 'CANCELLED' });
    expect((why as Error).message).toBe('a was cancelled (cancelled by SIGINT)');
    expect(final('a')).toMatchObject({ status: 'CANCELLED', reason: 'cancelled by SIGINT', exitCode: null });
    expect(final('b')?.reason).toBe('cancelled by SIGINT');
  });
});
