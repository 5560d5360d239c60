/** Process liveness for reservation records, guarded against PID reuse by the process start time. */
import { readFileSync } from 'node:fs';
import { errorCode } from '../util/errors.js';

interface ProcStat {
  /** one-letter state (R, S, D, Z, X, …) */
  state: string;
  /** start time in clock ticks since boot */
  startTime: number | null;
}

/**
 * Fields of /proc/<pid>/stat, or null where procfs is unavailable. The command name (field 2) may
 * contain spaces and parentheses, so fields are counted after its last ')'.
 */
function readStat(pid: number): ProcStat | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = raw.lastIndexOf(')');
  if (close < 0) return null;
  const fields = raw.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 (starttime) is fields[19]
  const start = Number(fields[19]);
  return { state: fields[0] ?? '', startTime: Number.isInteger(start) ? start : null };
}

/** Start time of `pid` (field 22 of /proc/<pid>/stat), or null where procfs is unavailable. */
export function processStartTime(pid: number): number | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return readStat(pid)?.startTime ?? null;
}

/**
 * Whether `pid` still runs and is the same process that wrote the record (when its start time was
 * recorded and can be read now). A PID owned by another user counts as alive; a zombie does not.
 */
export function isProcessAlive(pid: number, startTime: number | null): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (errorCode(e) !== 'EPERM') return false;
  }
  const stat = readStat(pid);
  if (stat === null) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === null || stat.startTime === null || stat.startTime === startTime;
}

/**
 * Real and effective uid of `pid` (the `Uid:` line of /proc/<pid>/status), or null where procfs is
 * unavailable. A record may only name a process of the user who wrote it.
 */
export function processUids(pid: number): number[] | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const line = /^Uid:\s+(\d+)\s+(\d+)/m.exec(raw);
  return line ? [Number(line[1]), Number(line[2])] : null;
}
