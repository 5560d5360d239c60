/**
 * The Slurm engine state of a handle: the job (allocation) the attempt runs in and the ids of its
 * steps within that job, once `scontrol` named them (empty while `srun` waits to create its step,
 * and for a command that runs on the driver). Labels are Slurm's own step ids, `job.step`, which
 * `scancel` takes; only `fromV1` reads such strings, from a version-1 ledger.
 */
import * as z from 'zod';
import type { HandleStateKind } from '../handle-state.js';

export const SlurmHandleStateSchema = z
  .object({
    kind: z.literal('slurm'),
    job: z.string().min(1).optional(),
    steps: z.array(z.string().min(1)),
  })
  .refine((s) => s.steps.length === 0 || s.job !== undefined, {
    message: 'steps without their job',
    path: ['job'],
  });
export type SlurmHandleState = z.infer<typeof SlurmHandleStateSchema>;

/** Slurm's id of each step of the state (`<job>.<step>`, as scancel and scontrol take it) */
export function slurmStepIds(s: SlurmHandleState): string[] {
  return s.job === undefined ? [] : s.steps.map((step) => `${s.job}.${step}`);
}

/** the legacy parse: `<job>.<step>` ids, all of one job */
function slurmStateFromV1(remoteIds: string[]): SlurmHandleState | { error: string } {
  const split = remoteIds.map((id) => ({ id, at: id.lastIndexOf('.') }));
  const bad = split.find((x) => x.at <= 0 || x.at === x.id.length - 1);
  if (bad) return { error: `'${bad.id}' is not a <job>.<step> id` };
  const jobs = new Set(split.map((x) => x.id.slice(0, x.at)));
  if (jobs.size > 1) return { error: `steps of ${jobs.size} jobs` };
  const [job] = jobs;
  return {
    kind: 'slurm',
    ...(job !== undefined ? { job } : {}),
    steps: split.map((x) => x.id.slice(x.at + 1)),
  };
}

export const slurmHandleState: HandleStateKind<'slurm', SlurmHandleState> = {
  type: 'slurm',
  schema: SlurmHandleStateSchema,
  labels: slurmStepIds,
  fromV1: slurmStateFromV1,
};
