/**
 * Is anything still running in a process group?
 *
 * `kill(-pgid, 0)` alone is not enough: a group whose members have all exited but were
 * re-parented to an init that never reaps (common in containers and sandboxes) keeps
 * zombies around, and signal 0 succeeds on zombies. On Linux we therefore confirm a
 * "still alive" answer by looking for a non-zombie member in /proc.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { errorCode } from './errors.js';

export type GroupState = 'gone' | 'alive' | 'zombies';

function signalZero(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    // EPERM: a member exists that we may not signal (setuid child); it is alive all the same.
    return errorCode(e) === 'EPERM';
  }
}

let procUsable: boolean | undefined;
function hasProc(): boolean {
  if (procUsable === undefined) {
    try {
      procUsable = process.platform === 'linux' && readFileSync('/proc/self/stat', 'utf8').length > 0;
    } catch {
      procUsable = false;
    }
  }
  return procUsable;
}

/**
 * Parses `/proc/<pid>/stat`: `pid (comm) S ppid pgrp ...`. The command name may contain
 * spaces and parentheses, so the fields are taken after the last `)`.
 */
export function parseProcStat(text: string): { state: string; pgrp: number } | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const pgrp = Number(fields[2]);
  if (!fields[0] || !Number.isInteger(pgrp)) return undefined;
  return { state: fields[0], pgrp };
}

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
    if (st && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X') out.push(Number(name));
  }
  return out;
}

/**
 * 'gone': no member at all; 'zombies': only unreaped zombies remain (nothing runs, nothing
 * to stop); 'alive': at least one member still runs (or we cannot tell, off Linux).
 * Pass `deep: false` to skip the /proc scan (cheap poll; zombies then read as 'alive').
 */
export function groupState(pgid: number, deep = true): GroupState {
  if (!signalZero(pgid)) return 'gone';
  if (!deep || !hasProc()) return 'alive';
  return liveGroupMembers(pgid).length > 0 ? 'alive' : 'zombies';
}

/** True while some member of the group still runs (zombies do not count). */
export function isGroupRunning(pgid: number): boolean {
  return groupState(pgid) === 'alive';
}
