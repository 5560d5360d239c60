/**
 * The session's calls on all backends at once: preflight (every problem of every backend in one
 * error), allocate (concurrently, progress as events, cancellable; a failure releases what was
 * allocated), release (idempotent, bounded, never throws).
 */
import type { Backend } from '../backends/backend.js';
import { SflowError } from '../util/sflow-error.js';
import type { RunEventInput } from '../events/events.js';
import type { PlannedNode } from '../plan/types.js';
import { errorMessage } from '../util/errors.js';
import { deadline } from '../util/deadline.js';
import type { Scope } from './scope.js';

const RELEASE_BOUND_MS = 10_000;

function userError(e: unknown): SflowError {
  return e instanceof SflowError
    ? e
    : new SflowError('run.backend', errorMessage(e), { phase: 'preflight', cause: e });
}

export async function preflightAll(
  backends: Map<string, Backend>,
  signal: AbortSignal,
  boundMs: number,
): Promise<void> {
  // a deadline, not AbortSignal.any([…, AbortSignal.timeout()]), whose timeout Node 20 can collect unfired
  const bounded = deadline(boundMs, [signal], `backend checks took longer than ${boundMs} ms`);
  const results = await Promise.allSettled(
    [...backends.values()].map((b) => b.preflight(bounded.signal)),
  ).finally(() => bounded.dispose());
  signal.throwIfAborted();
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [userError(r.reason)] : []));
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) {
    throw new SflowError(
      'run.preflight',
      `${failed.length} backends failed their checks:\n  ${failed.map((e) => e.message).join('\n  ')}`,
      {
        phase: 'preflight',
        details: failed.map((e) => ({ message: e.message, hint: e.hint })),
      },
    );
  }
}

/** Allocates every backend concurrently; returns the topology the plan places on. */
export async function allocateAll(
  backends: Map<string, Backend>,
  signal: AbortSignal,
  emit: (e: RunEventInput) => void,
): Promise<Record<string, PlannedNode[]>> {
  const started = Date.now();
  const results = await Promise.allSettled(
    [...backends].map(async ([name, b]) => {
      const a = await b.allocate(signal, (message) =>
        emit({
          type: 'backend_allocation',
          backend: name,
          phase: 'waiting',
          message,
          waitedMs: Date.now() - started,
        }),
      );
      emit({
        type: 'backend_allocation',
        backend: name,
        phase: 'allocated',
        message: `allocation ${a.id}: ${a.nodes.length} node(s)`,
        nodes: a.nodes.map((n) => n.name),
        waitedMs: Date.now() - started,
      });
      return [name, a.nodes] as const;
    }),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    const reason: unknown = failed.reason;
    for (const name of backends.keys())
      emit({ type: 'backend_allocation', backend: name, phase: 'failed', message: errorMessage(reason) });
    signal.throwIfAborted();
    throw userError(reason);
  }
  return Object.fromEntries(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
}

/**
 * Releases every backend (all of it) under a non-cancellable scope bounded by `RELEASE_BOUND_MS`
 * (the run's scope may be cancelled: the resources are given back anyway; a second Ctrl-C forces
 * the bound at once); failures become warnings.
 */
export async function releaseAll(
  backends: Map<string, Backend>,
  run: Scope,
  emit: (e: RunEventInput) => void,
): Promise<void> {
  if (backends.size === 0) return;
  const scope = run.shield(
    'release',
    RELEASE_BOUND_MS,
    `backend release took longer than ${RELEASE_BOUND_MS} ms`,
  );
  let timer: NodeJS.Timeout | undefined;
  // a backend that ignores its signal is not waited for past the bound either
  const bound = new Promise<'bound'>((r) => (timer = setTimeout(() => r('bound'), RELEASE_BOUND_MS + 500)));
  const all = Promise.allSettled([...backends.values()].map((b) => b.release(scope.signal)));
  const got = await Promise.race([all, bound]);
  clearTimeout(timer);
  scope.dispose();
  if (got === 'bound') {
    emit({
      type: 'log',
      level: 'warning',
      message: `backend release did not finish within ${RELEASE_BOUND_MS / 1000}s`,
    });
    return;
  }
  [...backends.keys()].forEach((name, i) => {
    const r = got[i];
    if (r.status === 'rejected')
      emit({ type: 'log', level: 'warning', message: `backend release failed: ${errorMessage(r.reason)}` });
    else emit({ type: 'backend_allocation', backend: name, phase: 'released', message: 'released' });
  });
}
