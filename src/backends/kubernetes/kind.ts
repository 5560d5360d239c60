/** Kubernetes (backends.md §5): pods through the API; the registry entry. */
import { KubernetesBackendSchema } from '../../config/schema/backend-kubernetes.js';
import { lazyPart, placeholderNodes, type BackendKind } from '../kind.js';
import { refineKubernetesPlan } from './merge-groups.js';
import { driverGone } from '../driver-identity.js';
import { liveDriverOf } from './run-record.js';
import { KUBERNETES_CLI_FLAGS } from './cli-flags.js';
import { kubernetesHandleState } from './handle-state.js';

const impl = lazyPart('kubernetes', () => import('./kind-impl.js'));

export const kubernetesKind: BackendKind<'kubernetes'> = {
  cliFlags: KUBERNETES_CLI_FLAGS,
  type: 'kubernetes',
  handleState: kubernetesHandleState,
  settings: KubernetesBackendSchema,
  capabilities: {
    label: 'Kubernetes',
    defaultOperator: null,
    gpuIndices: false,
    gpuReleaseOnReady: false,
    gpuReservationRegistry: false,
    monitor: false,
    batch: false,
    probesFrom: 'cluster',
    failFastDefault: true,
    pollIntervalMs: 1_500,
    syntheticNodes: false,
    removesContainers: false,
    notYet: [],
  },
  placeholder: ({ name, nodes, gpusPerNode }) => ({
    nodes: placeholderNodes(name, nodes, gpusPerNode),
    placeholder: true,
  }),
  refine: refineKubernetesPlan,
  // the pod builders need no client library: imported only by a dry-run that shows them
  dryRunDetail: async (plan, backend, options) =>
    (await import('./dry-run-manifests.js')).dryRunManifests(plan, backend, options),
  load: impl.load,
  create: (planned, ctx) => new (impl.get().KubernetesBackend)(planned, ctx),
  liveDriver: (runDir) => liveDriverOf(runDir, driverGone),
  recoverRun: (runDir, o) => impl.get().reapRun(runDir, o),
};
