/**
 * The Kubernetes engine state of a handle: the namespace of the attempt and its pod names (leader
 * first; the MPIJob route names its launcher). Labels read `namespace/pod`; only `fromV1` reads
 * such strings, from a version-1 ledger.
 */
import * as z from 'zod';
import type { HandleStateKind } from '../handle-state.js';

export const KubernetesHandleStateSchema = z.object({
  kind: z.literal('kubernetes'),
  namespace: z.string().min(1),
  pods: z.array(z.string().min(1)).min(1),
});
export type KubernetesHandleState = z.infer<typeof KubernetesHandleStateSchema>;

/** the legacy parse: `namespace/pod`, every pod of the attempt in one namespace */
function kubernetesStateFromV1(remoteIds: string[]): KubernetesHandleState | { error: string } {
  const split = remoteIds.map((id) => ({ id, at: id.indexOf('/') }));
  const bad = split.find((x) => x.at <= 0 || x.at === x.id.length - 1);
  if (bad) return { error: `'${bad.id}' is not <namespace>/<pod>` };
  if (split.length === 0) return { error: 'no pod names' };
  const namespaces = new Set(split.map((x) => x.id.slice(0, x.at)));
  if (namespaces.size > 1) return { error: `pods in ${namespaces.size} namespaces` };
  return {
    kind: 'kubernetes',
    namespace: [...namespaces][0],
    pods: split.map((x) => x.id.slice(x.at + 1)),
  };
}

export const kubernetesHandleState: HandleStateKind<'kubernetes', KubernetesHandleState> = {
  type: 'kubernetes',
  schema: KubernetesHandleStateSchema,
  labels: (s) => s.pods.map((p) => `${s.namespace}/${p}`),
  fromV1: kubernetesStateFromV1,
};
