/**
 * Recovering an attempt a dead driver left (contract v2 `recover`): its pods, ConfigMaps and
 * Secrets are found by the run, task and attempt labels the handle names (its remote ids give the
 * namespace); what runs is deleted (pods with the grace given), and the call waits until the pods
 * are gone. A second call finds nothing.
 */
import type { RecoverOutcome, StopOptions, TaskHandle } from '../backend.js';
import { type KubeApi } from './client.js';
import { deleteByLabel, podsGone } from './cleanup.js';
import { L_ATTEMPT, L_TASK, labelValue, runNames, selector } from './names.js';

export async function recoverAttempt(
  api: KubeApi,
  h: TaskHandle,
  opts: StopOptions,
  signal: AbortSignal,
): Promise<RecoverOutcome> {
  const t0 = Date.now();
  const sel = selector(runNames(h.runId), { [L_TASK]: labelValue(h.task), [L_ATTEMPT]: String(h.attempt) });
  const pods = await api.call(
    'read',
    'list',
    'pods',
    sel,
    (o) => api.core.listNamespacedPod({ namespace: api.namespace, labelSelector: sel }, o),
    { signal },
  );
  const live = pods.items.filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));
  const grace = opts.force ? 0 : Math.max(1, Math.ceil(opts.graceMs / 1000));
  const res = await deleteByLabel(api, sel, { claims: false, mpiJobs: true }, signal, grace);
  if (pods.items.length === 0)
    return { found: false, detail: `no pods of ${h.task}#${h.attempt} in namespace ${api.namespace}` };
  const deadline = Date.now() + opts.graceMs + 30_000;
  let gone = await podsGone(api, sel, signal);
  while (!gone && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    gone = await podsGone(api, sel, signal);
  }
  return {
    found: live.length > 0,
    stop: {
      signals: grace === 0 ? ['SIGKILL'] : ['SIGTERM'],
      gone,
      alreadyGone: live.length === 0,
      elapsedMs: Date.now() - t0,
      ...(res.errors.length ? { error: res.errors.join('; ') } : {}),
    },
    detail: `${live.length} running pod(s) of ${h.task}#${h.attempt} deleted from namespace ${api.namespace}`,
  };
}
