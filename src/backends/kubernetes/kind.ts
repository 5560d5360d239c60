/** Kubernetes (backends.md §5): planned and dry-run today; the backend itself is the next stage. */
import { KubernetesBackendSchema } from '../../config/schema/backend-kubernetes.js';
import { placeholderNodes, type BackendKind } from '../kind.js';

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
};
