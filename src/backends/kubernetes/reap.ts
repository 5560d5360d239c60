/**
 * `sflow recover <run dir>` for Kubernetes (the kind's `recoverRun` hook): the run directory's record names the namespace,
 * kubeconfig and context of each Kubernetes backend of the run; every object with the run's
 * label goes (one collection delete per kind), and the command waits (bounded) until the pods
 * are gone. `--kubeconfig` / `--kube-context` / `--kube-namespace` override the record.
 */
import type { RunRecoveryOptions } from '../kind.js';
import { KubeApi } from './client.js';
import { deleteByLabel, podsGone } from './cleanup.js';
import { loadKubeTarget } from './kube-options.js';
import { runNames, selector } from './names.js';
import { readRunRecords } from './run-record.js';

export async function reapRun(runDir: string, o: RunRecoveryOptions): Promise<string[]> {
  const { options, env, signal } = o;
  const lines: string[] = [];
  for (const rec of readRunRecords(runDir)) {
    const t = loadKubeTarget(
      rec.namespace,
      {
        ...options,
        // the flags given win over the record
        kubeconfig: options.kubeconfig ?? rec.kubeconfig,
        kubeContext: options.kubeContext ?? rec.context,
      },
      env,
    );
    const api = new KubeApi(t);
    const sel = selector(runNames(rec.runId));
    const res = await deleteByLabel(api, sel, { claims: true, mpiJobs: true }, signal);
    const deadline = Date.now() + 60_000;
    let gone = await podsGone(api, sel, signal);
    while (!gone && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      gone = await podsGone(api, sel, signal);
    }
    lines.push(
      `kubernetes backend '${rec.backend}': deleted the objects labelled ${sel} in namespace ${api.namespace}` +
        (gone ? '' : ' (some pods are still terminating)') +
        (res.errors.length ? `; failed: ${res.errors.join('; ')}` : ''),
    );
  }
  return lines;
}
