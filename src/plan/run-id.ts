/**
 * Run ids: `<workflow>-<YYYYMMDD>-<HHMMSS>-<6 hex>`, prefixed `<SLURM_JOB_ID>-` inside a Slurm job
 * (runtime.md §8.2). The run id names the run folder, so the workflow name goes through the folder
 * sanitiser (`../../x` cannot leave the output folder).
 */
import { randomBytes } from 'node:crypto';
import { folderName } from './folder-name.js';

export function makeRunId(workflow: string, now = new Date(), env: NodeJS.ProcessEnv = process.env): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  const job = env.SLURM_JOB_ID ?? env.SLURM_JOBID;
  // ≤ 16 + 1 + 80 + 23 bytes: the run id is itself a valid folder name (folderName keeps it)
  const id = `${folderName(workflow, 80)}-${stamp}-${randomBytes(3).toString('hex')}`;
  return job ? `${folderName(job, 16)}-${id}` : id;
}
