/** The local backend's registry entry (backends.md §2). */
import { LocalBackendSchema } from '../../config/schema/backends.js';
import type { BackendKind } from '../kind.js';
import { withMachineGpus } from './gpus.js';
import { LocalBackend, localNodes } from './local-backend.js';
import { localCollectorLauncher } from './monitor-collector.js';
import { localHandleState } from './handle-state.js';

export const localKind: BackendKind<'local'> = {
  type: 'local',
  handleState: localHandleState,
  settings: LocalBackendSchema,
  capabilities: {
    label: 'local',
    defaultOperator: 'bash',
    gpuIndices: true,
    gpuReleaseOnReady: true,
    gpuReservationRegistry: true,
    monitor: true,
    batch: false,
    probesFrom: 'driver',
    failFastDefault: false,
    pollIntervalMs: 500,
    syntheticNodes: true,
    removesContainers: false,
    notYet: ['local-node-filters'],
  },
  placeholder: ({ name, nodes, gpusPerNode }, tools) => {
    if (gpusPerNode === 0) {
      tools.fail(
        ['gpus_per_node'],
        'plan.gpus_per_node',
        `gpus_per_node must be > 0 (backend '${name}')`,
        'omit gpus_per_node for a CPU-only local backend (0 is accepted on docker, slurm and kubernetes backends)',
      );
    }
    // the synthetic allocation is known before allocating: these are the real nodes
    return { nodes: localNodes(nodes ?? 1, gpusPerNode), placeholder: false };
  },
  create: (planned, ctx) => new LocalBackend(planned, ctx),
  discover: async (planned) => {
    const declared = typeof planned.config.gpus_per_node === 'number' ? planned.config.gpus_per_node : null;
    const nodes = await withMachineGpus(localNodes(planned.nodes.length, declared), declared);
    return nodes.some((n) => n.gpuUuids?.length) ? nodes : undefined;
  },
  monitorCollector: localCollectorLauncher,
};
