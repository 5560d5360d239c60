/**
 * Pre-flight (backends.md §5.4): non-mutating SelfSubjectAccessReviews for what sflow does in the
 * namespace — pods (create, get, list, watch, delete, deletecollection), pods/log, pods/exec,
 * configmaps and secrets (create, delete, deletecollection) — each denial a hard failure, all of
 * them in one actionable error; cluster-scoped reads (nodes, namespaces, and deviceclasses with
 * DRA) only warn: node-level detection degrades. The namespace must exist. All checks run at once.
 * `SFLOW_SKIP_K8S_PREFLIGHT=1` skips them.
 */
import { setMaxListeners } from 'node:events';
import { SflowError } from '../../util/sflow-error.js';
import { apiMessage, apiStatus, type KubeApi } from './client.js';

interface Check {
  verb: string;
  resource: string;
  subresource?: string;
  group?: string;
  /** cluster-scoped: a denial only warns */
  cluster?: boolean;
  why: string;
}

export function requiredChecks(dra: boolean): Check[] {
  const pods = ['create', 'get', 'list', 'watch', 'delete', 'deletecollection'].map((verb) => ({
    verb,
    resource: 'pods',
    why: 'task and reservation pods',
  }));
  const objects = ['configmaps', 'secrets'].flatMap((resource) =>
    ['create', 'delete', 'deletecollection'].map((verb) => ({
      verb,
      resource,
      why: resource === 'secrets' ? 'the task environment' : 'task scripts and file:// artifacts',
    })),
  );
  return [
    ...pods,
    { verb: 'get', resource: 'pods', subresource: 'log', why: 'streaming task logs' },
    {
      verb: 'create',
      resource: 'pods',
      subresource: 'exec',
      why: 'in-cluster probes, output collect, merged-pod gates',
    },
    ...objects,
    { verb: 'list', resource: 'nodes', cluster: true, why: 'choosing nodes and reading their GPUs' },
    { verb: 'get', resource: 'namespaces', cluster: true, why: 'checking the namespace' },
    ...(dra
      ? [
          {
            verb: 'create',
            resource: 'resourceclaimtemplates',
            group: 'resource.k8s.io',
            why: 'DRA GPU claims',
          },
          {
            verb: 'list',
            resource: 'deviceclasses',
            group: 'resource.k8s.io',
            cluster: true,
            why: 'DRA device classes',
          },
        ]
      : []),
  ];
}

const label = (c: Check) =>
  `${c.verb} ${c.group ? `${c.resource}.${c.group}` : c.resource}${c.subresource ? `/${c.subresource}` : ''}`;

/** Runs the checks; throws one error listing every namespaced denial, returns the warnings. */
export async function accessPreflight(
  api: KubeApi,
  backend: string,
  dra: boolean,
  signal: AbortSignal,
): Promise<string[]> {
  const ns = api.namespace;
  const checks = requiredChecks(dra);
  // the reviews listen to a signal of their own that follows the caller's (AbortSignal.any adds
  // no listener to it): the caller's (a run's) would carry one per review at once (Node warns from 11)
  const fan = AbortSignal.any([signal]);
  setMaxListeners(0, fan);
  const answers = await Promise.all(
    checks.map(async (c) => {
      try {
        const r = await api.call(
          'write',
          'create',
          'selfsubjectaccessreviews',
          label(c),
          (o) =>
            api.authz.createSelfSubjectAccessReview(
              {
                body: {
                  spec: {
                    resourceAttributes: {
                      verb: c.verb,
                      resource: c.resource,
                      ...(c.subresource ? { subresource: c.subresource } : {}),
                      ...(c.group ? { group: c.group } : {}),
                      ...(c.cluster ? {} : { namespace: ns }),
                    },
                  },
                },
              },
              o,
            ),
          { signal: fan },
        );
        return { c, allowed: r.status?.allowed === true, reason: r.status?.reason };
      } catch (e) {
        signal.throwIfAborted();
        return { c, allowed: false, reason: `access review failed: ${apiMessage(e)}` };
      }
    }),
  );
  const denied = answers.filter((a) => !a.allowed && !a.c.cluster);
  const warnings = answers
    .filter((a) => !a.allowed && a.c.cluster)
    .map(
      (a) =>
        `Kubernetes backend '${backend}': not allowed to ${label(a.c)} (${a.c.why}); continuing with less detection`,
    );
  if (denied.length) {
    throw new SflowError(
      'k8s.rbac',
      `Kubernetes backend '${backend}' lacks ${denied.length} permission(s) in namespace '${ns}':\n  ${denied
        .map((a) => `${label(a.c)} — needed for ${a.c.why}${a.reason ? ` (${a.reason})` : ''}`)
        .join('\n  ')}`,
      {
        phase: 'preflight',
        hint: `ask your cluster admin for a Role in '${ns}' granting these verbs (and a RoleBinding to your user or service account); SFLOW_SKIP_K8S_PREFLIGHT=1 skips this check`,
      },
    );
  }
  try {
    await api.call('read', 'get', 'namespaces', ns, (o) => api.core.readNamespace({ name: ns }, o), {
      signal,
      expected: [403, 404],
    });
  } catch (e) {
    if (apiStatus(e) === 404) {
      throw new SflowError('k8s.namespace', `namespace '${ns}' does not exist (backend '${backend}')`, {
        phase: 'preflight',
        hint: 'create it first (sflow never creates namespaces), or pick another with --kube-namespace',
      });
    }
    signal.throwIfAborted();
    if (apiStatus(e) !== 403)
      throw new SflowError(
        'k8s.unreachable',
        `Kubernetes API unreachable for backend '${backend}': ${apiMessage(e)}`,
        { phase: 'preflight', hint: 'check --kubeconfig / --kube-context and that the cluster answers' },
      );
  }
  return warnings;
}
