/** What the Slurm kind imports only when a run, a resume or `sflow recover` uses it (kind.ts). */
export { SlurmBackend } from './slurm-backend.js';
export { recoverSlurmRun, slurmLiveDriver } from './recover-run.js';
