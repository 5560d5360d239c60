/**
 * A reservation outlives its driver while the driver's keeper lives: the task launcher
 * (util/launcher), which stops every task group it started when its driver is gone (TERM, the
 * grace, KILL) and only then exits. A record naming a keeper is therefore reaped only when both the
 * driver and the keeper are gone, so a lost run's GPUs go to no other run while its tasks may still
 * run on them (issue 9). Records without a keeper (inline spawn, older versions) follow the driver.
 */
import { isProcessAlive, processStartTime } from '../util/process-liveness.js';

export interface Keeper {
  pid: number;
  /** /proc start time (PID-reuse guard); null where unknown */
  startTime: number | null;
}

export function keeperOf(pid: number | undefined): Keeper | undefined {
  if (!pid || pid <= 0) return undefined;
  return { pid, startTime: processStartTime(pid) };
}

export function isKeeper(v: unknown): v is Keeper {
  if (typeof v !== 'object' || v === null || !('pid' in v) || !('startTime' in v)) return false;
  const { pid, startTime } = v;
  return (
    typeof pid === 'number' &&
    Number.isSafeInteger(pid) &&
    pid > 0 &&
    (startTime === null || Number.isSafeInteger(startTime))
  );
}

/** The pid of the record's driver if it runs, else of its keeper if that runs (PID-reuse guard on both). */
export function liveHolder(r: {
  pid: number;
  pidStartTime: number | null;
  keeper?: Keeper;
}): number | undefined {
  if (isProcessAlive(r.pid, r.pidStartTime)) return r.pid;
  const k = r.keeper;
  return k !== undefined && isKeeper(k) && isProcessAlive(k.pid, k.startTime) ? k.pid : undefined;
}

/** The record's driver, or its keeper, still runs. */
export function ownerAlive(r: { pid: number; pidStartTime: number | null; keeper?: Keeper }): boolean {
  return liveHolder(r) !== undefined;
}
