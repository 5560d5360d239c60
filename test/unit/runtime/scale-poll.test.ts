/**
 * Control calls at scale, against a polling fake engine (no watch) holding 1,000 live handles:
 * one status call per tick for the whole run (never one per task), one stop call for the
 * teardown, and no `MaxListenersExceededWarning` although every launch, status read and stop
 * waits on signals the run shares (each goes through boundedCall, as the Kubernetes client does).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  HandleStatus,
  LaunchRequest,
  StopOptions,
  StopOutcome,
  TaskHandle,
} from '../../../src/backends/backend.js';
import { Orchestrator } from '../../../src/runtime/orchestrator.js';
import { boundedCall } from '../../../src/util/bounded-call.js';
import { FakeBackend, FakeProbes, plan, task } from './fakes.js';

const N = 1000;
const TICK_MS = 20;

/** The fake engine's calls, as a real engine's API would see them. */
class PollingEngine {
  readonly name = 'local';
  readonly type = 'local' as const;
  readonly polls: number[] = [];
  readonly stops: number[] = [];
  /** every request, in order: `create`, `list`, `delete` */
  readonly calls: string[] = [];
  launches = 0;
  constructor(private readonly inner: FakeBackend) {}

  capabilities() {
    return { ...this.inner.capabilities(), pollIntervalMs: TICK_MS };
  }
  preflight = () => this.inner.preflight();
  allocate = () => this.inner.allocate();
  release = () => this.inner.release();
  inspect = (h: TaskHandle) => this.inner.inspect(h);
  recover = () => this.inner.recover();

  /** one API request per launch, bounded, cancellable by the run's signal (shared by every launch) */
  launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    this.launches++;
    this.calls.push('create');
    return boundedCall('fake-api', ['create', 'pod', req.task.name], () => this.inner.launch(req), {
      timeoutMs: 60_000,
      signal,
    });
  }

  /** one request for every handle given (a list by label) */
  poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    this.polls.push(handles.length);
    this.calls.push('list');
    return boundedCall('fake-api', ['list', 'pods'], () => this.inner.poll(handles), {
      timeoutMs: 60_000,
      signal,
    });
  }

  /** one batch; inside it a delete per handle, all waiting on the batch's one signal */
  async stop(handles: TaskHandle[], o: StopOptions, signal: AbortSignal): Promise<Map<string, StopOutcome>> {
    this.stops.push(handles.length);
    await Promise.all(
      handles.map((h) => {
        this.calls.push('delete');
        return boundedCall('fake-api', ['delete', 'pod', h.task], () => this.inner.stop([h], o, signal), {
          timeoutMs: 60_000,
          signal,
        });
      }),
    );
    return this.inner.stop(handles, o, signal);
  }
}

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('control calls per tick at 1,000 handles', () => {
  it('one status call per tick for all 1,000 live handles, one stop batch, no listener warning', async () => {
    process.on('warning', onWarning);
    const tasks = Array.from({ length: N }, (_, i) => task(`t${i}`));
    // every attempt runs until it is stopped
    const engine = new PollingEngine(new FakeBackend(Object.fromEntries(tasks.map((t) => [t.name, {}]))));
    const orch = new Orchestrator({
      plan: plan(tasks),
      backends: new Map([['local', engine]]),
      probes: new FakeProbes({}),
      emit: () => undefined,
      cwd: '/',
      baseEnv: {},
      graceMs: 100,
    });
    const out = orch.run();
    // ticks while all 1,000 run (real timers, a 20 ms tick; bounded by a deadline, not timed)
    const TICKS = 10;
    const deadline = Date.now() + 60_000;
    while (engine.polls.filter((n) => n === N).length < TICKS && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, TICK_MS));
    const running = engine.calls.slice(engine.calls.indexOf('list'));
    const whileRunning = running.slice(running.lastIndexOf('create') + 1);
    expect(tasks.every((t) => orch.status(t.name) === 'RUNNING')).toBe(true);
    orch.requestStop('SIGTERM');
    const done = await out;

    expect(engine.launches).toBe(N);
    // once all are launched, the only calls are status reads: one per tick, each with every handle
    expect(whileRunning.length).toBeGreaterThanOrEqual(TICKS - 1);
    expect(new Set(whileRunning)).toEqual(new Set(['list']));
    expect(engine.polls.filter((n) => n === N).length).toBeGreaterThanOrEqual(TICKS);
    expect(Math.max(...engine.polls)).toBe(N);
    // the teardown: one stop batch with every handle
    expect(engine.stops).toEqual([N]);
    expect(done.statuses.every(([, s]) => s === 'CANCELLED')).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual(
      [],
    );
  });
});
