/**
 * The one process-liveness module (src/util/process-liveness.ts): /proc/<pid>/stat parsing,
 * processes (zombies and reused pids are not the recorded process) and process groups.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  groupState,
  hasProc,
  isProcessAlive,
  parseProcStat,
  processStartTime,
  readProcStat,
} from '../../../src/util/process-liveness.js';

const linux = hasProc();
const children: number[] = [];

afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** a pid that ran and is gone (reaped) */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(String(r.stdout).trim());
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('parseProcStat', () => {
  it('takes the fields after the last parenthesis of the command name', () => {
    const rest = Array.from({ length: 20 }, (_, i) => String(100 + i)).join(' ');
    // state S, ppid 100, pgrp 101, …, starttime (field 22) = fields[19] after the name
    const st = parseProcStat(`4242 (a (b) c) ) S ${rest}`);
    expect(st).toEqual({ state: 'S', pgrp: 101, startTime: 118 });
  });

  it('refuses text that is not a stat line', () => {
    expect(parseProcStat('garbage')).toBeUndefined();
    expect(parseProcStat('1 (x) ')).toBeUndefined();
  });

  it.runIf(linux)('reads this process', () => {
    const st = readProcStat(process.pid);
    expect(st?.pgrp).toBe(Number(readFileSync('/proc/self/stat', 'latin1').split(') ')[1].split(' ')[2]));
    expect(processStartTime(process.pid)).toBe(st?.startTime);
  });
});

describe('isProcessAlive', () => {
  it('this process is alive, a reaped one and nonsense pids are not', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(deadPid())).toBe(false);
    for (const pid of [undefined, 0, -1, 1.5, Number.NaN]) expect(isProcessAlive(pid)).toBe(false);
  });

  it.runIf(linux)('a recorded start time tells a reused pid from the process recorded', () => {
    const start = processStartTime(process.pid);
    expect(start).not.toBeNull();
    expect(isProcessAlive(process.pid, start)).toBe(true);
    expect(isProcessAlive(process.pid, (start ?? 0) + 1)).toBe(false);
  });

  it.runIf(linux)('a zombie answers signal 0 but is not alive', async () => {
    // the background sleep ends after its parent has become `sleep 30`, which never reaps it: a zombie
    const sh = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(sh.pid!);
    const zombie = await new Promise<number>((resolve) =>
      sh.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    await until('the zombie', () => readProcStat(zombie)?.state === 'Z');
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isProcessAlive(zombie)).toBe(false);
    // the group still has a running member (sleep)
    expect(groupState(sh.pid!)).toBe('alive');
  });
});

describe('groupState', () => {
  it.runIf(linux)('a running group is alive; once killed it is gone', async () => {
    const g = spawn('sh', ['-c', 'sleep 30 & sleep 30'], { detached: true, stdio: 'ignore' });
    children.push(g.pid!);
    const exited = new Promise((r) => g.once('exit', r));
    await until('both sleeps', () => groupState(g.pid!) === 'alive');
    process.kill(-g.pid!, 'SIGKILL');
    await exited;
    await until('the group to empty', () => groupState(g.pid!) !== 'alive');
    expect(groupState(g.pid!)).not.toBe('alive');
  });

  it('never reads init or every process as a group', () => {
    expect(groupState(0)).toBe('gone');
    expect(groupState(1)).toBe('gone');
    expect(groupState(-5)).toBe('gone');
  });
});
