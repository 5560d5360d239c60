/** Slurm (backends.md §4): the registry entry — capabilities, placeholders, the exact salloc, the backend. */
import { SlurmBackendSchema } from '../../config/schema/backends.js';
import { placeholderNodes, type BackendKind } from '../kind.js';
import { inheritedJob, sallocArgv } from './allocate.js';
import { slurmCollectorLauncher } from './monitor-collector.js';
import { recoverSlurmRun, slurmLiveDriver } from './recover-run.js';
import { SlurmBackend } from './slurm-backend.js';

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
  allocationCommand: ({ config, workflow }) => {
    const job = inheritedJob(process.env);
    if (job)
      return `reuses Slurm job ${job.jobId} (SLURM_JOB_ID) on ${job.nodeList}: no salloc, never cancelled`;
    return sallocArgv(config, workflow);
  },
  create: (planned, ctx) => new SlurmBackend(planned, ctx),
  monitorCollector: () => slurmCollectorLauncher(),
  liveDriver: slurmLiveDriver,
  recoverRun: recoverSlurmRun,
};
