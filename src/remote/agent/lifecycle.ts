/**
 * The remote end of `--ssh`, run by the remote sflow (`sflow remote-agent …`, the same version as
 * the local one): start a controller detached from the SSH session, supervise it, stop it.
 *
 * `start` spawns a supervisor in a new session (setsid: no controlling terminal, so a dropped SSH
 * connection sends it no SIGHUP) and returns once the supervisor has written its pid. The
 * supervisor runs the controller (`sflow run …`) in its process group with output to
 * output/controller.log, forwards SIGINT/SIGTERM to it and writes state/exit.json when it ends.
 * `stop` signals the controller — SIGINT (20 s grace), SIGTERM (10 s), then SIGKILL of the
 * supervisor's process group (5 s) — and reports the outcome.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isSea } from 'node:sea';
import { errorMessage } from '../../util/errors.js';
import { isProcessAlive } from '../../util/process-liveness.js';
import { endLine, sessionPaths, stateOfCode, type ExitRecord, type SessionPaths } from '../session-layout.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How to start this same sflow again: the executable alone, or node + the script. */
export function selfCommand(): string[] {
  return isSea() ? [process.execPath] : [process.execPath, process.argv[1]];
}

function writeAtomic(path: string, text: string): void {
  try {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  } catch (e) {
    // the session folder was removed under a running supervisor: nothing left to record into
    process.stderr.write(`remote-agent: could not write ${path}: ${errorMessage(e)}\n`);
  }
}

export function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

export function readExit(p: SessionPaths): ExitRecord | undefined {
  try {
    return JSON.parse(readFileSync(p.exit, 'utf8')) as ExitRecord;
  } catch {
    return undefined;
  }
}

export async function agentStart(session: string, args: string[]): Promise<number> {
  const p = sessionPaths(session);
  if (existsSync(p.supervisorPid)) {
    process.stderr.write(`remote session ${session} was already started\n`);
    return 1;
  }
  mkdirSync(p.state, { recursive: true });
  mkdirSync(p.output, { recursive: true });
  mkdirSync(p.workspace, { recursive: true });
  const log = openSync(p.controllerLog, 'a');
  const [cmd, ...pre] = selfCommand();
  const child = spawn(cmd, [...pre, 'remote-agent', 'supervise', session, '--', ...args], {
    detached: true,
    stdio: ['ignore', log, log],
    cwd: p.workspace,
  });
  child.unref();
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (readPid(p.supervisorPid) && (readPid(p.controllerPid) || readExit(p))) {
      process.stdout.write(`started supervisor=${readPid(p.supervisorPid)}\n`);
      return 0;
    }
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  process.stderr.write(`the remote controller did not start (see ${p.controllerLog})\n`);
  return 1;
}

export async function agentSupervise(session: string, args: string[]): Promise<number> {
  const p = sessionPaths(session);
  process.on('SIGHUP', () => undefined);
  writeAtomic(p.supervisorPid, `${process.pid}\n`);
  const [cmd, ...pre] = selfCommand();
  const env = { ...process.env, SFLOW_TASK_OUTPUT: process.env.SFLOW_TASK_OUTPUT ?? 'always' };
  const child = spawn(cmd, [...pre, ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: p.workspace,
    env,
  });
  if (child.pid) writeAtomic(p.controllerPid, `${child.pid}\n`);
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.on(sig, () => {
      try {
        child.kill(sig);
      } catch {
        /* already gone */
      }
    });
  const code = await new Promise<number>((resolve) => {
    child.on('error', (e) => {
      process.stderr.write(`✗ could not start the controller: ${e.message}\n`);
      resolve(127);
    });
    child.on('exit', (c, s) => resolve(c ?? 128 + (s === 'SIGKILL' ? 9 : s === 'SIGTERM' ? 15 : 2)));
  });
  const rec: ExitRecord = { code, state: stateOfCode(code), ended: new Date().toISOString() };
  writeAtomic(p.exit, JSON.stringify(rec) + '\n');
  return 0;
}

const STEPS: Array<{ signal: NodeJS.Signals; graceMs: number; group: boolean }> = [
  { signal: 'SIGINT', graceMs: 20_000, group: false },
  { signal: 'SIGTERM', graceMs: 10_000, group: false },
  { signal: 'SIGKILL', graceMs: 5_000, group: true },
];

export async function agentStop(session: string): Promise<number> {
  const p = sessionPaths(session);
  const say = (s: string) => process.stderr.write(`${s}\n`);
  let sup = readPid(p.supervisorPid);
  let ctl = readPid(p.controllerPid);
  for (let i = 0; i < 50 && (!sup || !ctl) && !readExit(p); i++) {
    await sleep(100); // a stop right after the start: the pids are on their way
    sup = readPid(p.supervisorPid);
    ctl = readPid(p.controllerPid);
  }
  for (const step of STEPS) {
    const done = readExit(p);
    if (done) {
      process.stdout.write(endLine(done) + '\n');
      return 0;
    }
    if (!isProcessAlive(sup) && !isProcessAlive(ctl)) break;
    const target = step.group ? -sup! : ctl!;
    try {
      process.kill(target, step.signal);
      say(
        `sent ${step.signal} to the remote ${step.group ? 'process group' : 'controller'} (pid ${Math.abs(target)}); waiting up to ${step.graceMs / 1000} s`,
      );
    } catch {
      /* already gone */
    }
    const deadline = Date.now() + step.graceMs;
    while (Date.now() < deadline && !readExit(p) && (isProcessAlive(ctl) || isProcessAlive(sup)))
      await sleep(200);
  }
  let rec = readExit(p);
  if (!rec) {
    // the supervisor was killed before it could write the record
    const stillThere = isProcessAlive(ctl) || isProcessAlive(sup);
    rec = { code: 137, state: stillThere ? 'unknown' : 'cancelled', ended: new Date().toISOString() };
    if (!stillThere) writeAtomic(p.exit, JSON.stringify(rec) + '\n');
  }
  process.stdout.write(endLine(rec) + '\n');
  return rec.state === 'unknown' ? 1 : 0;
}
