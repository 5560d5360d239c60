/**
 * The driver ↔ launcher wire format (both launchers speak it; see perl-launcher.ts). Requests are
 * length-prefixed frames of NUL-separated fields, so arguments and values may hold any byte but
 * NUL (which no argv or environment entry can hold anyway); replies are short text lines.
 */
import { constants } from 'node:os';
import { getSystemErrorMap } from 'node:util';

export interface LaunchFields {
  id: number;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logPath: string;
  /** TERM → KILL grace the launcher gives this group when the driver is gone */
  graceMs: number;
}

/** Thrown before anything is sent: a field cannot be framed (a NUL byte). */
export class FrameError extends Error {}

function check(what: string, s: string): string {
  if (s.includes('\0')) throw new FrameError(`${what} contains a NUL byte`);
  return s;
}

export function encodeLaunch(f: LaunchFields): Buffer {
  const fields = [
    'L',
    String(f.id),
    check('working directory', f.cwd),
    check('log path', f.logPath),
    String(Math.max(0, Math.round(f.graceMs))),
    String(f.argv.length),
  ];
  for (const a of f.argv) fields.push(check('argument', a));
  for (const k of Object.keys(f.env)) {
    const v = f.env[k];
    if (v === undefined) continue;
    fields.push(check(`environment variable ${k}`, `${k}=${v}`));
  }
  const body = Buffer.from(fields.join('\0'), 'utf8');
  return Buffer.concat([Buffer.from(`${body.length}\n`, 'latin1'), body]);
}

export type Reply =
  | { kind: 'ready'; version: number }
  | { kind: 'started'; id: number; pid: number; startTime: number | null }
  | { kind: 'failed'; id: number; errno: number }
  | { kind: 'exited'; pid: number; code: number | null; signal: NodeJS.Signals | null };

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

export function parseReply(line: string): Reply | undefined {
  const p = line.split(' ');
  const n = (i: number) => Number(p[i]);
  switch (p[0]) {
    case 'R':
      return { kind: 'ready', version: n(1) };
    case 'S':
      return { kind: 'started', id: n(1), pid: n(2), startTime: p[3] && p[3] !== '-' ? n(3) : null };
    case 'E':
      return { kind: 'failed', id: n(1), errno: n(2) };
    case 'X': {
      const sig = n(3);
      return {
        kind: 'exited',
        pid: n(1),
        code: sig ? null : n(2),
        signal: sig ? (SIGNAL_NAMES.get(sig) ?? null) : null,
      };
    }
    default:
      return undefined;
  }
}

/** `ENOENT` and its text for an errno number, as Node names it. */
export function errnoInfo(errno: number): { code: string; message: string } {
  const hit = getSystemErrorMap().get(-Math.abs(errno));
  return hit ? { code: hit[0], message: hit[1] } : { code: `E${errno}`, message: `error ${errno}` };
}
