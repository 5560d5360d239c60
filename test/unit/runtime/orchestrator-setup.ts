/** The orchestrator under test on the in-memory fakes (fakes.ts): set-up, clock and waits shared by its test files. */
import { expect, vi } from 'vitest';
import { Orchestrator, type RunEventInput } from '../../../src/runtime/orchestrator.js';
import type { OrchestratorOptions, ResumeTasks } from '../../../src/runtime/orchestrator-types.js';
import type { PlannedTask } from '../../../src/plan/types.js';
import type { TaskHandle } from '../../../src/backends/backend.js';
import type { Scope } from '../../../src/runtime/scope.js';
import { FakeBackend, FakeProbes, plan, type AttemptScript, type FakeProbeScript } from './fakes.js';

export interface SetupOptions {
  ignoreTerm?: boolean;
  failLaunch?: string[];
  busyLaunches?: Record<string, number>;
  /** every launch takes this long before its handle exists (an engine's slow submit) */
  launchMs?: number;
  /** per task: a launch that fails this way only once the run's signal aborts (a submit cut short) */
  launchFailsOnAbort?: Record<string, Error>;
  graceMs?: number;
  taskReady?: (h: TaskHandle, signal: AbortSignal) => Promise<void>;
  taskReadyTimeoutMs?: number;
  scope?: Scope;
  submittedOnly?: boolean;
  submittedAt?: string;
  taskFolder?: (task: string) => void;
  finalize?: OrchestratorOptions['finalize'];
  resume?: ResumeTasks;
  /** the backend leaves recording its handles to the orchestrator */
  noRecord?: boolean;
}

export type SeenEvent = RunEventInput & { at: number; given?: number };

export function setup(
  tasks: PlannedTask[],
  scripts: Record<string, AttemptScript[] | AttemptScript>,
  probeScripts: Record<string, FakeProbeScript> = {},
  opts: SetupOptions = {},
) {
  const backend = new FakeBackend(scripts, opts);
  const probes = new FakeProbes(probeScripts);
  /** `at`: when the event was emitted (fake clock); `given`: the `at` the event itself carried */
  const events: SeenEvent[] = [];
  /** the events as the orchestrator emitted them */
  const raw: RunEventInput[] = [];
  /** the handle ledger's writes: operation, task#attempt */
  const ledger: string[] = [];
  const orch = new Orchestrator({
    plan: plan(tasks),
    backends: new Map([['local', backend]]),
    probes,
    emit: (e) => {
      raw.push(e);
      events.push({ ...e, at: Date.now(), given: (e as { at?: number }).at });
    },
    cwd: '/',
    baseEnv: { INHERITED: 'yes', SHADOWED: 'outer' },
    graceMs: opts.graceMs ?? 200,
    ...(opts.taskReadyTimeoutMs !== undefined ? { taskReadyTimeoutMs: opts.taskReadyTimeoutMs } : {}),
    ...(opts.scope ? { scope: opts.scope } : {}),
    ...(opts.taskFolder ? { taskFolder: opts.taskFolder } : {}),
    ...(opts.finalize ? { finalize: opts.finalize } : {}),
    ...(opts.resume ? { resume: opts.resume } : {}),
    ledger: (op, h) => ledger.push(`${op} ${h.task}#${h.attempt}`),
  });
  const final = (name: string) => {
    const f = events.filter((e) => e.type === 'task_finished' && e.task === name);
    return f[f.length - 1] as Extract<RunEventInput, { type: 'task_finished' }> | undefined;
  };
  return { backend, probes, events, raw, ledger, orch, final };
}

export const statusMap = (s: Array<[string, string]>) => Object.fromEntries(s);

/**
 * On a fake clock: timers fire in order and Date.now() is virtual, so "at once" and "right after"
 * are exact comparisons that a busy machine cannot break (set up before the orchestrator starts;
 * the test file gives the real timers back after each test).
 */
export function fakeClock(): void {
  vi.useFakeTimers({ now: 1_000_000 });
}

/** Runs to the end on the fake clock. */
export async function runAll<T>(p: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return p;
}

/** settles the fake clock until `task` has been launched `n` times */
export async function launched(backend: FakeBackend, task: string, n = 1) {
  for (let i = 0; i < 100 && backend.launches.filter((l) => l.task === task).length < n; i++)
    await vi.advanceTimersByTimeAsync(1);
  expect(backend.launches.filter((l) => l.task === task)).toHaveLength(n);
}
