/**
 * Batched stop of attempts (contract v2): one collection delete of all their pods with the grace
 * as `gracePeriodSeconds` (the kubelet sends SIGTERM, then SIGKILL after it; `force`: 0), then a
 * wait until every attempt reported EXITED with its log drained. A hurry (second Ctrl-C) repeats
 * the delete with no grace.
 */
import type { StopOptions, StopOutcome } from '../backend.js';
import { handleKey } from '../backend.js';
import type { PodAttempt } from './attempt.js';
import { L_ATTEMPT, L_TASK, labelValue, selector } from './names.js';
import type { K8sRun } from './run-context.js';

export function attemptsSelector(r: K8sRun, attempts: PodAttempt[]): string {
  const tasks = [...new Set(attempts.map((a) => labelValue(a.handle.task)))];
  const numbers = [...new Set(attempts.map((a) => String(a.handle.attempt)))];
  return `${selector(r.run)},${L_TASK} in (${tasks.join(',')}),${L_ATTEMPT} in (${numbers.join(',')})`;
}

async function deletePods(
  r: K8sRun,
  labelSelector: string,
  grace: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    await r.api.call(
      'delete',
      'deletecollection',
      'pods',
      labelSelector,
      (o) =>
        r.api.core.deleteCollectionNamespacedPod(
          { namespace: r.api.namespace, labelSelector, gracePeriodSeconds: grace },
          o,
        ),
      { signal },
    );
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

export async function stopAttempts(
  r: K8sRun,
  attempts: PodAttempt[],
  opts: StopOptions,
  hurry: AbortSignal,
): Promise<Map<string, StopOutcome>> {
  const t0 = Date.now();
  const out = new Map<string, StopOutcome>();
  const live = attempts.filter((a) => a.state !== 'EXITED');
  for (const a of attempts)
    if (a.state === 'EXITED')
      out.set(handleKey(a.handle), { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 });
  if (live.length === 0) return out;
  const force = opts.force === true || hurry.aborted;
  const grace = force ? 0 : Math.max(1, Math.ceil(opts.graceMs / 1000));
  for (const a of live) a.markStopping(force ? 'SIGKILL' : 'SIGTERM', force ? 0 : opts.graceMs);
  const sel = attemptsSelector(r, live);
  const err = await deletePods(r, sel, grace);
  let hurried = false;
  const onHurry = () => {
    hurried = true;
    void deletePods(r, sel, 0);
  };
  if (!force) hurry.addEventListener('abort', onHurry, { once: true });
  const bound = opts.graceMs + 30_000;
  await Promise.all(
    live.map(async (a) => {
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        a.done.then(() => true),
        new Promise<boolean>((res) => (timer = setTimeout(() => res(false), bound))),
      ]);
      clearTimeout(timer);
      if (!ok) a.fail(`pods still present ${Math.round(bound / 1000)}s after the stop`);
      const killed = force || hurried || a.exit?.signal === 'SIGKILL';
      out.set(handleKey(a.handle), {
        signals: force ? ['SIGKILL'] : killed ? ['SIGTERM', 'SIGKILL'] : ['SIGTERM'],
        gone: ok,
        alreadyGone: false,
        elapsedMs: Date.now() - t0,
        ...(err ? { error: err } : !ok ? { error: 'pods did not go away in time' } : {}),
      });
    }),
  );
  hurry.removeEventListener('abort', onHurry);
  return out;
}
