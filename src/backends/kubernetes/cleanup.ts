/**
 * Deleting what a run created: one collection delete per kind selected by the run's label (pods,
 * ConfigMaps, Secrets, and — when the run made them — ResourceClaimTemplates, MPIJobs), bounded
 * at 300 s each, then a wait until the pods are really gone. Also the reaping of runs whose
 * driver died (SIGKILL): every object records the driver (`sflow/driver` = host:pid:start); a
 * later run in the same namespace on the same host deletes the objects of drivers that are gone
 * (found on any kind it deletes),
 * and `sflow recover <run dir>` deletes one run's objects from anywhere.
 */
import { driverGone } from '../driver-identity.js';
import { apiMessage, apiStatus, type KubeApi } from './client.js';
import { A_DRIVER, A_RUN_ID, L_RUN, MANAGED_BY } from './names.js';
import { MPIJOB_GROUP, MPIJOB_PLURAL, MPIJOB_VERSION } from './mpijob.js';

export interface Kinds {
  claims: boolean;
  mpiJobs: boolean;
}

export interface Deleted {
  /** kinds whose deletion failed, with the reason */
  errors: string[];
}

/** Deletes every object matching `labelSelector`, one collection delete per kind. */
export async function deleteByLabel(
  api: KubeApi,
  labelSelector: string,
  kinds: Kinds,
  signal?: AbortSignal,
  gracePeriodSeconds = 0,
): Promise<Deleted> {
  const ns = api.namespace;
  const calls: Array<[string, () => Promise<unknown>]> = [
    [
      'pods',
      () =>
        api.call(
          'delete',
          'deletecollection',
          'pods',
          labelSelector,
          (o) =>
            api.core.deleteCollectionNamespacedPod({ namespace: ns, labelSelector, gracePeriodSeconds }, o),
          { signal },
        ),
    ],
    [
      'configmaps',
      () =>
        api.call(
          'delete',
          'deletecollection',
          'configmaps',
          labelSelector,
          (o) => api.core.deleteCollectionNamespacedConfigMap({ namespace: ns, labelSelector }, o),
          { signal },
        ),
    ],
    [
      'secrets',
      () =>
        api.call(
          'delete',
          'deletecollection',
          'secrets',
          labelSelector,
          (o) => api.core.deleteCollectionNamespacedSecret({ namespace: ns, labelSelector }, o),
          { signal },
        ),
    ],
  ];
  if (kinds.claims)
    calls.push([
      'resourceclaimtemplates',
      () =>
        api.call(
          'delete',
          'deletecollection',
          'resourceclaimtemplates',
          labelSelector,
          (o) =>
            api.resource.deleteCollectionNamespacedResourceClaimTemplate({ namespace: ns, labelSelector }, o),
          { signal },
        ),
    ]);
  if (kinds.mpiJobs)
    calls.push([
      'mpijobs',
      () =>
        api.call(
          'delete',
          'deletecollection',
          'mpijobs',
          labelSelector,
          (o) =>
            api.custom.deleteCollectionNamespacedCustomObject(
              { group: 'kubeflow.org', version: 'v2beta1', namespace: ns, plural: 'mpijobs', labelSelector },
              o,
            ),
          { signal },
        ),
    ]);
  const results = await Promise.allSettled(calls.map(([, f]) => f()));
  const errors: string[] = [];
  results.forEach((r, i) => {
    if (r.status === 'rejected' && apiStatus(r.reason) !== 404)
      errors.push(`${calls[i][0]}: ${apiMessage(r.reason)}`);
  });
  return { errors };
}

/** true when no pod matches `labelSelector` any more (one list) */
export async function podsGone(api: KubeApi, labelSelector: string, signal?: AbortSignal): Promise<boolean> {
  const got = await api.call(
    'read',
    'list',
    'pods',
    labelSelector,
    (o) => api.core.listNamespacedPod({ namespace: api.namespace, labelSelector }, o),
    { signal },
  );
  return got.items.length === 0;
}

interface Meta {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

/**
 * Runs in the namespace whose driver on this host is gone: their run label and run id. One list
 * per kind sflow creates (what deleteByLabel deletes): pods, ConfigMaps, Secrets (a run killed
 * right after its env Secret leaves only that), ResourceClaimTemplates and MPIJobs (kinds a
 * cluster may not serve, or not let us list: none of them then).
 */
export async function staleRuns(api: KubeApi, signal?: AbortSignal): Promise<Map<string, string>> {
  const labelSelector = `${MANAGED_BY}=sflow`;
  const namespace = api.namespace;
  const optional = [404, 403];
  const lists: Array<Promise<{ items?: Meta[] } | undefined>> = [
    api.call(
      'read',
      'list',
      'pods',
      labelSelector,
      (o) => api.core.listNamespacedPod({ namespace, labelSelector }, o),
      { signal },
    ),
    api.call(
      'read',
      'list',
      'configmaps',
      labelSelector,
      (o) => api.core.listNamespacedConfigMap({ namespace, labelSelector }, o),
      { signal },
    ),
    api.call(
      'read',
      'list',
      'secrets',
      labelSelector,
      (o) => api.core.listNamespacedSecret({ namespace, labelSelector }, o),
      { signal },
    ),
    api.maybe(
      'read',
      'list',
      'resourceclaimtemplates',
      labelSelector,
      (o) => api.resource.listNamespacedResourceClaimTemplate({ namespace, labelSelector }, o),
      { signal, expected: optional },
    ),
    api.maybe(
      'read',
      'list',
      'mpijobs',
      labelSelector,
      async (o) =>
        (await api.custom.listNamespacedCustomObject(
          { group: MPIJOB_GROUP, version: MPIJOB_VERSION, namespace, plural: MPIJOB_PLURAL, labelSelector },
          o,
        )) as { items?: Meta[] },
      { signal, expected: optional },
    ),
  ];
  const out = new Map<string, string>();
  for (const list of await Promise.all(lists))
    for (const item of list?.items ?? []) {
      const meta = item.metadata;
      const run = meta?.labels?.[L_RUN];
      if (run && driverGone(meta?.annotations?.[A_DRIVER]))
        out.set(run, meta?.annotations?.[A_RUN_ID] ?? run);
    }
  return out;
}
