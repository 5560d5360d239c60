/**
 * `sflow recover <run dir>` for Slurm: the allocations a dead driver created (`salloc`) and never
 * released, from `slurm_allocations.jsonl`, are cancelled if Slurm still lists them; inherited jobs
 * (the job sflow ran inside) are never touched. The task steps are recovered before this, from
 * the handle ledger, by SlurmBackend.recover.
 */
import type { RunRecoveryOptions } from '../kind.js';
import { driverAlive, readAllocationRecord, writeAllocationLine } from './allocation-record.js';
import { slurmExec, callFailure } from './slurm-exec.js';

export function slurmLiveDriver(runDir: string): string | undefined {
  const live = readAllocationRecord(runDir).drivers.find(driverAlive);
  return live ? `sflow (pid ${live.pid} on ${live.host}) still runs this run` : undefined;
}

export async function recoverSlurmRun(runDir: string, o: RunRecoveryOptions): Promise<string[]> {
  const exec = slurmExec(o.env);
  const done: string[] = [];
  for (const a of readAllocationRecord(runDir).open) {
    if (!a.owned) {
      done.push(`Slurm job ${a.jobId} (${a.backend}) was inherited (SLURM_JOB_ID): left alone`);
      continue;
    }
    const q = await exec('squeue', ['-h', '-j', a.jobId, '-o', '%i %T'], { signal: o.signal, retries: 1 });
    const listed = q.ok && q.stdout.trim().split(/\s+/)[0] === a.jobId;
    if (!listed && (q.ok || /Invalid job id/i.test(q.stderr))) {
      done.push(`Slurm job ${a.jobId} (${a.backend}) had already ended`);
      writeAllocationLine(runDir, { op: 'released', backend: a.backend, jobId: a.jobId, owned: true });
      continue;
    }
    const r = await exec('scancel', [a.jobId], { signal: o.signal, retries: 2 });
    if (!r.ok) {
      done.push(`Slurm job ${a.jobId} (${a.backend}): ${callFailure('scancel', [a.jobId], r)}`);
      continue;
    }
    writeAllocationLine(runDir, { op: 'released', backend: a.backend, jobId: a.jobId, owned: true });
    done.push(`Slurm job ${a.jobId} (${a.backend}) cancelled (scancel ${a.jobId})`);
  }
  return done;
}
