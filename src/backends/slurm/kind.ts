/** Slurm (backends.md §4): planned and dry-run today; the backend itself is the next stage. */
import { SlurmBackendSchema } from '../../config/schema/backends.js';
import { placeholderNodes, type BackendKind } from '../kind.js';

export const slurmKind: BackendKind = {
  type: 'slurm',
  settings: SlurmBackendSchema,
  capabilities: {
    label: 'Slurm',
    defaultOperator: 'srun',
    gpuIndices: true,
    gpuReleaseOnReady: true,
    gpuReservationRegistry: false,
    monitor: true,
    batch: true,
    probesFrom: 'driver',
    failFastDefault: false,
    pollIntervalMs: 2_000,
    syntheticNodes: false,
  },
  placeholder: ({ name, nodes, gpusPerNode }) => ({
    nodes: placeholderNodes(name, nodes, gpusPerNode),
    placeholder: true,
  }),
};
