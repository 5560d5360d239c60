/** Run ids: `<workflow>-<YYYYMMDD>-<HHMMSS>-<6 hex>`, prefixed `<SLURM_JOB_ID>-` inside a Slurm job (runtime.md §8.2). */
import { randomBytes } from 'node:crypto';

export function makeRunId(workflow: string, now = new Date(), env: NodeJS.ProcessEnv = process.env): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  const job = env.SLURM_JOB_ID ?? env.SLURM_JOBID;
  const id = `${workflow}-${stamp}-${randomBytes(3).toString('hex')}`;
  return job ? `${job}-${id}` : id;
}
