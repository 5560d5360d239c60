/**
 * Launches one `k8s_mpi` attempt on the MPIJob route: the script ConfigMap and env Secret (as
 * on the pods route), the reserved GPUs handed over on every node of the task, one MPIJob
 * (mpijob.ts), then the launcher pod the mpi-operator makes, found by its labels
 * (`training.kubeflow.org/job-name` + `job-role=launcher`) within `launcher_discovery_timeout`.
 * The attempt follows that pod: its log is the task log, its exit code the task's; the workers
 * (`<job>-worker-<i>`, the operator's names) do not decide the task, but a stop waits until they
 * are gone too (sflow deletes the MPIJob with the attempt).
 */
import type { LaunchRequest, TaskHandle } from '../backend.js';
import { apiStatus } from './client.js';
import {
  MPIJOB_GROUP,
  MPIJOB_PLURAL,
  MPIJOB_VERSION,
  OP_JOB_NAME,
  OP_JOB_ROLE,
  buildMpiJob,
} from './mpijob.js';
import { mpiSettings } from './mpi-pods.js';
import { L_ATTEMPT, L_NODE, L_TASK, labelValue, selector } from './names.js';
import type { K8sRun } from './run-context.js';
import { createObject, gpusPerPod, newHandle, prepareTaskPods, type LaunchCore } from './task-pods.js';
import type { KubeApi } from './client.js';
import { k8sOperatorConfig } from './operator-config.js';

const POLL_MS = 1000;
const PROGRESS_MS = 30_000;

/** true when the API serves kubeflow.org/v2beta1 mpijobs in the namespace (one bounded list) */
export async function mpiJobServed(api: KubeApi, signal: AbortSignal): Promise<boolean> {
  try {
    await api.call(
      'read',
      'list',
      'mpijobs',
      undefined,
      (o) =>
        api.custom.listNamespacedCustomObject(
          {
            group: MPIJOB_GROUP,
            version: MPIJOB_VERSION,
            namespace: api.namespace,
            plural: MPIJOB_PLURAL,
            limit: 1,
          },
          o,
        ),
      { signal },
    );
    return true;
  } catch (e) {
    if (apiStatus(e) === 404) return false;
    throw e;
  }
}

export async function deleteMpiJob(api: KubeApi, name: string, signal?: AbortSignal): Promise<void> {
  await api.maybe(
    'delete',
    'delete',
    'mpijobs',
    name,
    (o) =>
      api.custom.deleteNamespacedCustomObject(
        {
          group: MPIJOB_GROUP,
          version: MPIJOB_VERSION,
          namespace: api.namespace,
          plural: MPIJOB_PLURAL,
          name,
          propagationPolicy: 'Background',
        },
        o,
      ),
    { signal },
  );
}

async function findLauncher(
  core: LaunchCore,
  task: string,
  job: string,
  timeoutS: number,
  signal: AbortSignal,
): Promise<string> {
  const { r } = core;
  const labelSelector = `${OP_JOB_NAME}=${job},${OP_JOB_ROLE}=launcher`;
  const t0 = Date.now();
  let said = t0;
  for (;;) {
    signal.throwIfAborted();
    const got = await r.api
      .call(
        'read',
        'list',
        'pods',
        labelSelector,
        (o) => r.api.core.listNamespacedPod({ namespace: r.api.namespace, labelSelector }, o),
        { signal },
      )
      .catch(() => undefined);
    const pod = got?.items.find((p) => !p.metadata?.deletionTimestamp)?.metadata?.name;
    if (pod) return pod;
    const waited = Date.now() - t0;
    if (waited >= timeoutS * 1000)
      throw new Error(
        `MPIJob ${job}: the mpi-operator made no launcher pod within ${timeoutS}s (mpi.launcher_discovery_timeout); is the operator running in the cluster? (kubectl get mpijob ${job} -o yaml)`,
      );
    if (Date.now() - said >= PROGRESS_MS) {
      said = Date.now();
      r.log(
        `Task '${task}': waiting for the mpi-operator's launcher pod of MPIJob ${job} (${Math.round(waited / 1000)}s of ${timeoutS}s)`,
        'info',
      );
    }
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
}

export async function launchMpiJob(
  core: LaunchCore,
  req: LaunchRequest,
  signal: AbortSignal,
  /** the MPIJob exists (the caller deletes it if the launch fails after this) */
  created: (job: string) => void,
): Promise<{ handle: TaskHandle; pods: string[]; job: string }> {
  const { r } = core;
  const t = req.task;
  const m = mpiSettings(k8sOperatorConfig(t.operator));
  const artifacts = await core.artifacts(signal);
  const p = prepareTaskPods(core, req, artifacts);
  const pod0 = p.pods[0];
  const job = p.configMap.metadata!.name!.replace(/-script$/, '');
  const labels = { ...(pod0.metadata?.labels ?? {}) };
  delete labels[L_NODE];
  const slots = m.slotsPerWorker ?? Math.max(1, gpusPerPod(t));
  const body = buildMpiJob(
    job,
    r.api.namespace,
    labels,
    { ...(pod0.metadata?.annotations ?? {}) },
    {
      pods: p.pods,
      settings: m,
      slots,
      launcherCreationPolicy: m.launcherCreationPolicy,
    },
  );
  await createObject(r.api, 'configmaps', p.configMap, signal);
  if (p.secret) await createObject(r.api, 'secrets', p.secret, signal);
  // the operator makes the pods: every reserved node of the task hands its GPUs over first
  const gpus = gpusPerPod(t);
  for (const pod of p.pods)
    await core.reservation.place(
      pod.spec?.nodeSelector?.['kubernetes.io/hostname'] ?? '',
      gpus,
      () => Promise.resolve([]),
      signal,
    );
  await r.api.call(
    'write',
    'create',
    'mpijobs',
    job,
    (o) =>
      r.api.custom.createNamespacedCustomObject(
        {
          group: MPIJOB_GROUP,
          version: MPIJOB_VERSION,
          namespace: r.api.namespace,
          plural: MPIJOB_PLURAL,
          body,
        },
        o,
      ),
    { signal },
  );
  created(job);
  r.log(
    `Task '${t.name}': MPIJob ${job} created (${p.pods.length - 1} worker(s), ${slots} slot(s) each)`,
    'info',
  );
  const launcher = await findLauncher(core, t.name, job, m.launcherDiscoveryTimeoutS, signal);
  const handle = newHandle(core, req, [launcher]);
  req.record(handle);
  // the workers the operator names <job>-worker-<i>: a stop waits for them too
  const workers = p.pods.slice(1).map((_, i) => `${job}-worker-${i}`);
  return { handle, pods: [launcher, ...workers], job };
}

/** a launch stopped or failed before its attempt was tracked: its pods go at once, then the MPIJob */
export async function abandonMpiJob(
  r: K8sRun,
  req: Pick<LaunchRequest, 'task' | 'attempt'>,
  job: string,
): Promise<void> {
  const sel = selector(r.run, { [L_TASK]: labelValue(req.task.name), [L_ATTEMPT]: String(req.attempt) });
  await r.api
    .call('delete', 'deletecollection', 'pods', sel, (o) =>
      r.api.core.deleteCollectionNamespacedPod(
        { namespace: r.api.namespace, labelSelector: sel, gracePeriodSeconds: 0 },
        o,
      ),
    )
    .catch(() => undefined);
  await deleteMpiJob(r.api, job).catch(() => undefined);
}
