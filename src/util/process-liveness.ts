/**
 * Does a process, or a process group, still run? The one answer for the whole driver: task
 * groups and their stop (util/process-group.ts, util/terminate/), GPU reservation records
 * (gpu/), run-index entries and resume (runtime/), the driver identities backends stamp on what
 * they create, download temp files (artifacts/), the remote agent's controller and supervisor.
 *
 * Signal 0 alone is not enough, for two reasons:
 *  - a zombie answers signal 0, but runs nothing: a process re-parented to an init that never
 *    reaps (PID 1 of many containers and sandboxes) stays a zombie for good. On Linux a "yes" is
 *    confirmed in /proc/<pid>/stat (state Z or X is gone);
 *  - a pid is reused: a record that kept the process's start time (field 22 of /proc/<pid>/stat,
 *    clock ticks since boot) is matched against it, so another process under the same pid is not
 *    taken for the one recorded.
 * EPERM from signal 0 means the process exists under another user: alive. Off Linux (no /proc) the
 * answers fall back to signal 0.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { errorCode } from './errors.js';

export interface ProcStat {
  /** one-letter state (R, S, D, Z, X, …) */
  state: string;
  /** process group */
  pgrp: number;
  /** start time in clock ticks since boot; null when the field does not parse */
  startTime: number | null;
}

/**
 * Parses `/proc/<pid>/stat`: `pid (comm) S ppid pgrp …`. The command name may contain spaces and
 * parentheses, so the fields are taken after the last `)`.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state): pgrp (field 5) is fields[2], starttime (field 22) fields[19]
  const pgrp = Number(fields[2]);
  if (!fields[0] || !Number.isInteger(pgrp)) return undefined;
  const start = Number(fields[19]);
  return { state: fields[0], pgrp, startTime: Number.isInteger(start) ? start : null };
}

let procUsable: boolean | undefined;
/** /proc can be read here (Linux) */
export function hasProc(): boolean {
  if (procUsable === undefined) {
    try {
      procUsable = process.platform === 'linux' && readFileSync('/proc/self/stat', 'utf8').length > 0;
    } catch {
      procUsable = false;
    }
  }
  return procUsable;
}

/** /proc/<pid>/stat of a process, or null (no such process, or no procfs) */
export function readProcStat(pid: number): ProcStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'latin1')) ?? null;
  } catch {
    return null;
  }
}

/** Start time of `pid` (field 22 of /proc/<pid>/stat), or null where procfs is unavailable. */
export function processStartTime(pid: number): number | null {
  return readProcStat(pid)?.startTime ?? null;
}

/** signal 0 reaches something: the pid (or, negative, the group) exists, a zombie included */
function signalZero(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under a user we may not signal (a setuid child, another user's driver)
    return errorCode(e) === 'EPERM';
  }
}

const gone = (state: string): boolean => state === 'Z' || state === 'X';

/**
 * `pid` still runs (not a zombie) and, when `startTime` is given and both start times can be read,
 * is the process that started then. A process owned by another user counts as alive.
 */
export function isProcessAlive(pid: number | undefined, startTime: number | null = null): boolean {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return false;
  if (!signalZero(pid)) return false;
  const stat = readProcStat(pid);
  if (stat === null) return !hasProc() || signalZero(pid);
  if (gone(stat.state)) return false;
  return startTime === null || stat.startTime === null || stat.startTime === startTime;
}

/**
 * Real and effective uid of `pid` (the `Uid:` line of /proc/<pid>/status), or null where procfs is
 * unavailable. A GPU reservation record may only name a process of the user who wrote it.
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

export type GroupState = 'gone' | 'alive' | 'zombies';

/** Pids of the non-zombie members of a group, from /proc (Linux only; empty elsewhere). */
export function liveGroupMembers(pgid: number): number[] {
  if (!hasProc()) return [];
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    const st = parseProcStat(text);
    if (st && st.pgrp === pgid && !gone(st.state)) out.push(Number(name));
  }
  return out;
}

/**
 * 'gone': no member at all; 'zombies': only unreaped zombies remain (nothing runs, nothing
 * to stop); 'alive': at least one member still runs (or we cannot tell, off Linux).
 * Pass `deep: false` to skip the /proc scan (cheap poll; zombies then read as 'alive').
 */
export function groupState(pgid: number, deep = true): GroupState {
  if (!Number.isInteger(pgid) || pgid <= 1 || !signalZero(-pgid)) return 'gone';
  if (!deep || !hasProc()) return 'alive';
  return liveGroupMembers(pgid).length > 0 ? 'alive' : 'zombies';
}

/** True while some member of the group still runs (zombies do not count). */
export function isGroupRunning(pgid: number): boolean {
  return groupState(pgid) === 'alive';
}
