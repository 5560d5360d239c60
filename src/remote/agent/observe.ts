/**
 * Watching a remote session from the remote side (`sflow remote-agent follow|snapshot`); reads
 * only the session's files, never a scheduler. Modes of `follow`:
 *   stream  the controller's console output as it is written (what a local run prints)
 *   logs    every N s a snapshot: `[ssh HH:MM:SS]`, then sflow_summary.log and the two most
 *           recently changed other logs, 10 lines each (`, unchanged for Ns` when nothing moved)
 *   status  every N s one heartbeat line with the controller's latest console line
 * Each ends with the controller's last console lines and the end line (session-layout.ts).
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { endLine, sessionPaths, type ExitRecord, type SessionPaths } from '../session-layout.js';
import { isProcessAlive } from '../../util/process-liveness.js';
import { readExit, readPid } from './lifecycle.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_READ = 256 * 1024;

/** The run folder: the newest folder under output/. */
export function runDir(p: SessionPaths): string | undefined {
  let best: { dir: string; t: number } | undefined;
  try {
    for (const e of readdirSync(p.output, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const dir = join(p.output, e.name);
      const t = statSync(dir).mtimeMs;
      if (!best || t > best.t) best = { dir, t };
    }
  } catch {
    return undefined;
  }
  return best?.dir;
}

function walk(dir: string, keep: (path: string) => boolean, out: string[] = [], depth = 4): string[] {
  if (depth < 0) return out;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path, keep, out, depth - 1);
    else if (e.isFile() && keep(path)) out.push(path);
  }
  return out;
}

/** The last `n` lines of a file, reading at most 256 KiB from its end. */
export function tailLines(path: string, n: number): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = statSync(path).size;
    const len = Math.min(size, MAX_READ);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-n);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function clock(d = new Date()): string {
  return d.toTimeString().slice(0, 8);
}

/** The files a snapshot shows, and a signature that changes when any of them does. */
function snapshotFiles(p: SessionPaths): { files: string[]; sig: string } {
  const run = runDir(p);
  const files: string[] = [];
  const summary = run ? join(run, 'sflow_summary.log') : undefined;
  if (summary && existsSync(summary)) files.push(summary);
  const others = [
    ...(run ? walk(run, (f) => f.endsWith('.log') && f !== summary) : []),
    ...(existsSync(p.controllerLog) ? [p.controllerLog] : []),
  ]
    .map((f) => ({ f, t: statSync(f).mtimeMs }))
    .sort((a, b) => b.t - a.t)
    .slice(0, 2)
    .map((x) => x.f);
  files.push(...others);
  const sig = files.map((f) => `${f}:${statSync(f).size}:${statSync(f).mtimeMs}`).join('|');
  return { files, sig };
}

export function snapshotText(p: SessionPaths, unchangedFor?: number): string {
  const head = `[ssh ${clock()}]${unchangedFor !== undefined ? `, unchanged for ${unchangedFor}s` : ''}`;
  if (unchangedFor !== undefined) return head + '\n';
  const { files } = snapshotFiles(p);
  if (files.length === 0) return `${head}\n(waiting for sflow logs)\n`;
  const blocks = files.map((f) => [`==> ${relative(p.output, f)} <==`, ...tailLines(f, 10)].join('\n'));
  return `${head}\n${blocks.join('\n')}\n`;
}

/** The exit record, or one saying the supervisor vanished without writing it. */
function finished(p: SessionPaths): ExitRecord | undefined {
  const rec = readExit(p);
  if (rec) return rec;
  const sup = readPid(p.supervisorPid);
  if (sup && !isProcessAlive(sup) && !readExit(p))
    return { code: 1, state: 'unknown', ended: new Date().toISOString() };
  return undefined;
}

export type FollowMode = 'stream' | 'logs' | 'status';

export async function agentFollow(session: string, mode: FollowMode, intervalS: number): Promise<number> {
  const p = sessionPaths(session);
  const out = (s: string) => process.stdout.write(s);
  process.on('SIGHUP', () => process.exit(0)); // the connection went: the run goes on
  let offset = 0;
  const pump = () => {
    // stream: copy what the controller wrote since last time
    let fd: number | undefined;
    try {
      fd = openSync(p.controllerLog, 'r');
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        out(buf.subarray(0, n).toString('utf8'));
      }
    } catch {
      /* not there yet */
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };
  let lastSig = '';
  let lastChange = Date.now();
  let nextTick = 0;
  for (;;) {
    const end = finished(p);
    if (mode === 'stream') pump();
    else if (Date.now() >= nextTick || end) {
      nextTick = Date.now() + intervalS * 1000;
      if (mode === 'logs') {
        const { sig } = snapshotFiles(p);
        if (sig !== lastSig || end) {
          lastSig = sig;
          lastChange = Date.now();
          out(snapshotText(p));
        } else out(snapshotText(p, Math.round((Date.now() - lastChange) / 1000)));
      } else if (!end) {
        const last = tailLines(p.controllerLog, 1)[0] ?? '(starting)';
        out(`[ssh ${clock()}] running — ${last.slice(0, 200)}\n`);
      }
    }
    if (end) {
      if (mode !== 'stream') out(tailLines(p.controllerLog, 3).join('\n') + '\n');
      out(endLine(end) + '\n');
      return 0;
    }
    await sleep(mode === 'stream' ? 300 : 250);
  }
}

export function agentSnapshot(session: string): number {
  const p = sessionPaths(session);
  process.stdout.write(snapshotText(p));
  const end = finished(p);
  process.stdout.write(end ? endLine(end) + '\n' : '');
  return 0;
}
