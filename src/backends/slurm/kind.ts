/** Slurm (backends.md §4): the registry entry — capabilities, placeholders, the exact salloc, the backend. */
import { SlurmBackendSchema } from '../../config/schema/backends.js';
import { lazyPart, placeholderNodes, stringList, type BackendKind } from '../kind.js';
import { inheritedJob, nodeFilter, sallocArgv } from './allocate.js';
import { slurmCollectorLauncher } from './monitor-collector.js';
import { applySlurmExtraArgs, applySlurmGpusPerNode } from './extra-args.js';
import { slurmBatch } from './batch-env.js';
import { SLURM_CLI_FLAGS } from './cli-flags.js';
import { slurmHandleState } from './handle-state.js';

const impl = lazyPart('slurm', () => import('./kind-impl.js'));

export const slurmKind: BackendKind<'slurm'> = {
  cliFlags: SLURM_CLI_FLAGS,
  applyRunFlags: (recipe, options, env) => [
    ...applySlurmExtraArgs(recipe, stringList(options.extraArgs)),
    ...applySlurmGpusPerNode(recipe, env),
  ],
  batch: slurmBatch,
  type: 'slurm',
  handleState: slurmHandleState,
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
    removesContainers: false,
    notYet: [],
  },
  placeholder: ({ name, nodes, gpusPerNode }) => ({
    nodes: placeholderNodes(name, nodes, gpusPerNode),
    placeholder: true,
  }),
  allocationCommand: ({ config, workflow }) => {
    const job = inheritedJob(process.env);
    const filters = [
      nodeFilter(config.include_nodes) && `only ${nodeFilter(config.include_nodes)}`,
      nodeFilter(config.exclude_nodes) && `not ${nodeFilter(config.exclude_nodes)}`,
    ].filter(Boolean);
    if (job)
      return `reuses Slurm job ${job.jobId} (SLURM_JOB_ID) on ${job.nodeList}${filters.length ? ` (${filters.join(', ')})` : ''}: no salloc, never cancelled`;
    return sallocArgv(config, workflow);
  },
  load: impl.load,
  create: (planned, ctx) => new (impl.get().SlurmBackend)(planned, ctx),
  monitorCollector: () => slurmCollectorLauncher(),
  liveDriver: (runDir) => impl.get().slurmLiveDriver(runDir),
  recoverRun: (runDir, o) => impl.get().recoverSlurmRun(runDir, o),
};
