/** Kubernetes (backends.md §5): pods through the API; the registry entry. */
import { KubernetesBackendSchema } from '../../config/schema/backend-kubernetes.js';
import { placeholderNodes, type BackendKind } from '../kind.js';
import { KubernetesBackend } from './kubernetes-backend.js';
import { refineKubernetesPlan } from './merge-groups.js';
import { driverGone } from './cleanup.js';
import { reapRun } from './reap.js';
import { liveDriverOf } from './run-record.js';

export const kubernetesKind: BackendKind = {
  type: 'kubernetes',
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
  },
  placeholder: ({ name, nodes, gpusPerNode }) => ({
    nodes: placeholderNodes(name, nodes, gpusPerNode),
    placeholder: true,
  }),
  refine: refineKubernetesPlan,
  create: (planned, ctx) => new KubernetesBackend(planned, ctx),
  liveDriver: (runDir) => liveDriverOf(runDir, (d) => driverGone(d)),
  recoverRun: reapRun,
};
