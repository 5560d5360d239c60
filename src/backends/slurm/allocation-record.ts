/**
 * `<run dir>/slurm_allocations.jsonl`: one line when sflow learns the id of a Slurm allocation
 * it asked for or inherited (even while the job is still queued) and one when it gave it back.
 * With the handle ledger (`handles.jsonl`, the steps) it is what `sflow recover <run dir>` reads
 * after a driver was SIGKILLed: an owned allocation that was never released is cancelled.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, processStartTime } from '../../util/process-liveness.js';

export const ALLOCATION_RECORD = 'slurm_allocations.jsonl';

export interface DriverRef {
  pid: number;
  host: string;
  startTime: number | null;
}

export interface AllocationLine {
  v: 1;
  /** ms epoch */
  t: number;
  op: 'allocated' | 'released';
  backend: string;
  jobId: string;
  /** sflow created it (salloc): recovery cancels it; an inherited job is never cancelled */
  owned: boolean;
  driver: DriverRef;
}

export function thisDriver(): DriverRef {
  return { pid: process.pid, host: hostname(), startTime: processStartTime(process.pid) };
}

/** Appends one line; a failure to write is returned (the run goes on, the caller warns). */
export function writeAllocationLine(
  runDir: string,
  line: Omit<AllocationLine, 'v' | 't' | 'driver'>,
): Error | undefined {
  if (!runDir) return undefined;
  const full: AllocationLine = { v: 1, t: Date.now(), ...line, driver: thisDriver() };
  try {
    appendFileSync(join(runDir, ALLOCATION_RECORD), JSON.stringify(full) + '\n');
    return undefined;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

export interface AllocationState {
  /** allocations recorded and not released, latest line of each job */
  open: AllocationLine[];
  /** drivers that wrote the record */
  drivers: DriverRef[];
}

export function readAllocationRecord(runDir: string): AllocationState {
  const path = join(runDir, ALLOCATION_RECORD);
  const latest = new Map<string, AllocationLine>();
  const drivers = new Map<string, DriverRef>();
  if (!existsSync(path)) return { open: [], drivers: [] };
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (!text.trim()) continue;
    let line: AllocationLine;
    try {
      line = JSON.parse(text) as AllocationLine;
    } catch {
      continue; // a driver killed mid-write leaves at most its last line torn
    }
    if (line?.v !== 1 || !line.jobId) continue;
    latest.set(line.jobId, line);
    if (line.driver) drivers.set(`${line.driver.host}:${line.driver.pid}`, line.driver);
  }
  return { open: [...latest.values()].filter((l) => l.op !== 'released'), drivers: [...drivers.values()] };
}

/** The driver still runs on this machine (same pid and start time). Another host: unknown → false. */
export function driverAlive(d: DriverRef): boolean {
  return d.host === hostname() && isProcessAlive(d.pid, d.startTime);
}
