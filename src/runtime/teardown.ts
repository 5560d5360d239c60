/**
 * Stopping attempts at the end of a run, on fail-fast and on signals (runtime.md 6.7): one
 * batched `stop` per backend for all of its handles (graceful request, grace, force), all backends
 * in parallel, the whole thing bounded so an interrupt can never hang the driver: past the bound
 * every handle is stopped again with `force`. A second Ctrl-C aborts the graceful stop (force).
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleKey, type Backend, type StopOutcome, type TaskHandle } from '../backends/backend.js';
import type { RunEvent, RunEventInput } from '../events/events.js';
import { errorMessage } from '../util/errors.js';
import type { TaskRt } from './task-state.js';

export interface StopTarget {
  task: string;
  attempt: number;
  backend: Backend;
  handle: TaskHandle;
}

export interface StopResult extends StopOutcome {
  target: StopTarget;
}

/** Every attempt ever launched (stray children of earlier attempts are stopped too). */
export function stopTargets(tasks: TaskRt[]): StopTarget[] {
  const out: StopTarget[] = [];
  for (const t of tasks) {
    for (const h of t.handles)
      out.push({ task: t.plan.name, attempt: h.attempt, backend: t.backend, handle: h });
  }
  return out;
}

function byBackend(targets: StopTarget[]): Map<Backend, StopTarget[]> {
  const m = new Map<Backend, StopTarget[]>();
  for (const t of targets) {
    const list = m.get(t.backend);
    if (list) list.push(t);
    else m.set(t.backend, [t]);
  }
  return m;
}

/** One batched stop per backend; a backend that throws yields an error outcome for each of its handles. */
async function stopBatch(
  backend: Backend,
  targets: StopTarget[],
  graceMs: number,
  force: boolean,
  signal: AbortSignal,
): Promise<StopResult[]> {
  const t0 = Date.now();
  let got: Map<string, StopOutcome>;
  try {
    got = await backend.stop(
      targets.map((t) => t.handle),
      { graceMs, force },
      signal,
    );
  } catch (e) {
    got = new Map();
    const error = errorMessage(e);
    for (const t of targets)
      got.set(handleKey(t.handle), {
        signals: [],
        gone: false,
        alreadyGone: false,
        elapsedMs: Date.now() - t0,
        error,
      });
  }
  return targets.map((target) => ({
    target,
    ...(got.get(handleKey(target.handle)) ?? {
      signals: [],
      gone: false,
      alreadyGone: false,
      elapsedMs: Date.now() - t0,
      error: `${backend.name} returned no outcome`,
    }),
  }));
}

/**
 * Stops every target: resolves after all stops finished or `boundMs` passed (then every target
 * is force-stopped, itself bounded). `hurry` aborting turns the graceful stop into a kill.
 */
export async function stopAll(
  targets: StopTarget[],
  graceMs: number,
  boundMs: number,
  onStopped: (r: StopResult) => void,
  hurry?: AbortSignal,
): Promise<void> {
  if (targets.length === 0) return;
  const bound = AbortSignal.timeout(boundMs);
  const signal = hurry ? AbortSignal.any([hurry, bound]) : bound;
  setMaxListeners(0, signal);
  const all = Promise.all(
    [...byBackend(targets)].map(([b, list]) =>
      stopBatch(b, list, graceMs, false, signal).then((rs) => rs.forEach(onStopped)),
    ),
  );
  // the bound's listener is removed once the stops end: a timeout signal with a listener is kept
  // alive by Node until it fires, and this listener's closure holds the whole run (its tasks,
  // handles, sinks) — seconds of a big run's memory pinned through its report
  let onBound = (): void => undefined;
  const timedOut = await Promise.race([
    all.then(() => false),
    new Promise<boolean>((r) => {
      onBound = () => r(true);
      bound.addEventListener('abort', onBound, { once: true });
    }),
  ]).finally(() => bound.removeEventListener('abort', onBound));
  if (timedOut) {
    await killAll(targets);
    await Promise.race([all, sleep(2_000, undefined, { ref: false })]);
  }
}

/** Force-stops every target at once (second Ctrl-C, bound passed); bounded, never throws. */
export async function killAll(targets: StopTarget[]): Promise<void> {
  const signal = AbortSignal.timeout(5_000);
  await Promise.all([...byBackend(targets)].map(([b, list]) => stopBatch(b, list, 0, true, signal)));
}

type StopWhy = Extract<RunEvent, { type: 'task_stopped' }>['why'];

/** stopAll with `teardown` start/end events and a `task_stopped` event per attempt that ran. */
export async function stopAndReport(
  targets: StopTarget[],
  graceMs: number,
  emit: (e: RunEventInput) => void,
  why: () => StopWhy,
  hurry?: AbortSignal,
): Promise<void> {
  const t0 = Date.now();
  emit({ type: 'teardown', phase: 'start', groups: targets.length });
  await stopAll(
    targets,
    graceMs,
    graceMs + 3_000,
    (r) => {
      if (r.error)
        emit({
          type: 'log',
          level: 'warning',
          message: `could not stop task '${r.target.task}': ${r.error}`,
        });
      if (r.alreadyGone) return;
      emit({
        type: 'task_stopped',
        task: r.target.task,
        attempt: r.target.attempt,
        why: why(),
        signals: r.signals,
        elapsedMs: r.elapsedMs,
      });
    },
    hurry,
  );
  emit({ type: 'teardown', phase: 'end', groups: targets.length, elapsedMs: Date.now() - t0 });
}
