/**
 * Stopping process groups at the end of a run, on fail-fast and on signals (runtime.md 6.7):
 * every group in parallel, TERM → grace → KILL, the whole thing bounded so an interrupt
 * can never hang the driver. A second Ctrl-C turns it into an immediate kill.
 */
import type { Backend, TaskHandle } from '../backends/backend.js';
import type { RunEvent } from '../events/events.js';
import type { TaskRt } from './task-state.js';

export interface StopTarget {
  task: string;
  attempt: number;
  backend: Backend;
  handle: TaskHandle;
}

export interface StopResult {
  target: StopTarget;
  signals: string[];
  alreadyGone: boolean;
  elapsedMs: number;
  error?: string;
}

/** True unless the backend can tell the attempt has nothing left running. */
export function mayBeAlive(t: StopTarget): boolean {
  const b = t.backend;
  return b.isAlive ? b.isAlive(t.handle) : true;
}

export async function stopOne(t: StopTarget, graceMs: number): Promise<StopResult> {
  const t0 = Date.now();
  const b = t.backend;
  try {
    if (b.stopWithOutcome) {
      const o = await b.stopWithOutcome(t.handle, graceMs);
      return { target: t, signals: o.signals, alreadyGone: o.alreadyGone, elapsedMs: Date.now() - t0 };
    }
    await b.stop(t.handle, graceMs);
    return { target: t, signals: [], alreadyGone: false, elapsedMs: Date.now() - t0 };
  } catch (e) {
    return {
      target: t,
      signals: [],
      alreadyGone: false,
      elapsedMs: Date.now() - t0,
      error: (e as Error).message,
    };
  }
}

/**
 * Stops every target in parallel. Resolves after all stops finished or `boundMs` passed, in
 * which case every target is force-killed first.
 */
export async function stopAll(
  targets: StopTarget[],
  graceMs: number,
  boundMs: number,
  onStopped: (r: StopResult) => void,
): Promise<void> {
  if (targets.length === 0) return;
  const all = Promise.all(
    targets.map((t) =>
      stopOne(t, graceMs).then((r) => {
        onStopped(r);
      }),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'bound'>((resolve) => {
    timer = setTimeout(() => resolve('bound'), boundMs);
  });
  const first = await Promise.race([all.then(() => 'done' as const), bound]);
  clearTimeout(timer);
  if (first === 'bound') {
    await Promise.all(targets.map((t) => t.backend.kill(t.handle).catch(() => undefined)));
    await Promise.race([all, new Promise((r) => setTimeout(r, 2_000).unref())]);
  }
}

export function killAll(targets: StopTarget[]): Promise<void> {
  return Promise.all(targets.map((t) => t.backend.kill(t.handle).catch(() => undefined))).then(
    () => undefined,
  );
}

type StopWhy = Extract<RunEvent, { type: 'task_stopped' }>['why'];

/** stopAll with `teardown` start/end events and a `task_stopped` event per group that ran. */
export async function stopAndReport(
  targets: StopTarget[],
  graceMs: number,
  emit: (
    e: Extract<RunEvent, { type: 'teardown' | 'task_stopped' }> extends infer E
      ? E extends unknown
        ? Omit<E, 't'>
        : never
      : never,
  ) => void,
  why: () => StopWhy,
): Promise<void> {
  const t0 = Date.now();
  emit({ type: 'teardown', phase: 'start', groups: targets.length });
  await stopAll(targets, graceMs, graceMs + 3_000, (r) => {
    if (r.alreadyGone) return;
    emit({
      type: 'task_stopped',
      task: r.target.task,
      attempt: r.target.attempt,
      why: why(),
      signals: r.signals,
      elapsedMs: r.elapsedMs,
    });
  });
  emit({ type: 'teardown', phase: 'end', groups: targets.length, elapsedMs: Date.now() - t0 });
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
