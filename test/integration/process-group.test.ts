import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { groupState, liveGroupMembers } from '../../src/util/process-liveness.js';
import {
  SpawnError,
  killAllGroupsSync,
  liveGroups,
  spawnGroup,
  type GroupHandle,
} from '../../src/util/process-group.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-pg-'));
let seq = 0;
const logPath = () => join(dir, `t${++seq}.log`);
const started: GroupHandle[] = [];

afterEach(() => {
  // never leave a sleeper behind, whatever the test did
  for (const h of started.splice(0)) h.killGroupNow();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(script: string, marker = 'sflow-test', log = logPath()) {
  const h = await spawnGroup({ argv: ['bash', '-c', script, marker], logPath: log });
  started.push(h);
  return { h, log };
}

/** pids of running (non-zombie) processes whose command line contains `marker` */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmd.includes(marker) && state !== 'Z') out.push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

async function until(what: string, cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A hang guard, not a timing assertion: fails with `what` if `p` is still pending after `ms`
 * (far longer than it needs on any machine, far shorter than the wait it must not do).
 */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, guard]);
  } finally {
    clearTimeout(timer);
  }
}

const uniq = () => `sflowmark-${process.pid}-${Date.now()}-${++seq}`;

describe('spawnGroup', () => {
  it('reports exit codes and writes stdout+stderr to the log in order', async () => {
    const { h, log } = await run('echo one; echo two >&2; printf three; exit 3');
    expect(h.pgid).toBe(h.pid);
    expect(await h.exited).toEqual({ code: 3, signal: null, at: expect.any(Number) });
    expect(readFileSync(log, 'utf8')).toBe('one\ntwo\nthree');
    expect(h.exitInfo()).toEqual({ code: 3, signal: null, at: expect.any(Number) });
    // the exit's time: after the spawn, not in the future
    expect(h.exitInfo()!.at!).toBeGreaterThanOrEqual(h.startedAt);
    expect(h.exitInfo()!.at!).toBeLessThanOrEqual(Date.now());
  });

  it('appends to an existing log and passes cwd and env', async () => {
    const log = logPath();
    writeFileSync(log, 'before\n');
    const h = await spawnGroup({
      argv: ['bash', '-c', 'echo "$PWD $FOO"'],
      cwd: dir,
      env: { PATH: process.env.PATH, FOO: 'bar' },
      logPath: log,
    });
    started.push(h);
    expect((await h.exited).code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe(`before\n${dir} bar\n`);
  });

  it('reports a signal exit', async () => {
    const { h } = await run('kill -USR1 $$');
    expect(await h.exited).toEqual({ code: null, signal: 'SIGUSR1', at: expect.any(Number) });
  });

  it('rejects with a SpawnError when the program does not exist', async () => {
    await expect(spawnGroup({ argv: ['/nonexistent/prog-xyz'], logPath: logPath() })).rejects.toBeInstanceOf(
      SpawnError,
    );
    await expect(spawnGroup({ argv: ['/nonexistent/prog-xyz'], logPath: logPath() })).rejects.toThrow(
      /cannot start '\/nonexistent\/prog-xyz'.*ENOENT/,
    );
  });
});

describe('stop', () => {
  it('stops background children and grandchildren, not just the leader', async () => {
    const m = uniq();
    const script = `
      sleep 300 &
      bash -c 'sleep 300 & sleep 300; true' ${m}-a &
      ( bash -c 'sleep 300; true' ${m}-b & wait ) &
      echo started
      wait`;
    const { h, log } = await run(script, m);
    await until(
      'children',
      () => readFileSync(log, 'utf8').includes('started') && processesWith(m).length >= 4,
    );
    expect(liveGroupMembers(h.pgid).length).toBeGreaterThanOrEqual(6);
    // SIGTERM suffices: stop returns once the group is empty, not when a 10-minute grace ends
    const out = await within(20_000, 'stop after SIGTERM', h.stop(600_000));
    expect(out.gone).toBe(true);
    expect(out.alreadyGone).toBe(false);
    expect(out.signals).toEqual(['SIGTERM']);
    expect(groupState(h.pgid)).not.toBe('alive');
    expect(liveGroupMembers(h.pgid)).toEqual([]);
    expect(processesWith(m)).toEqual([]);
    expect(h.isRunning()).toBe(false);
    expect(h.exitInfo()).toBeDefined();
    expect(liveGroups()).not.toContain(h.pgid);
  });

  it('stops the orphans of a leader that already exited', async () => {
    const m = uniq();
    const { h } = await run(`bash -c 'sleep 300; true' ${m} & echo bg`, m);
    expect((await h.exited).code).toBe(0);
    await until('orphan', () => processesWith(m).length === 1);
    expect(h.isRunning()).toBe(true);
    expect(liveGroups()).toContain(h.pgid);
    const out = await h.stop(2000);
    expect(out).toMatchObject({ gone: true, alreadyGone: false, signals: ['SIGTERM'] });
    expect(processesWith(m)).toEqual([]);
  });

  it('SIGKILLs a group that ignores SIGTERM once the grace period is over', async () => {
    const m = uniq();
    const { h, log } = await run(`trap '' TERM; bash -c 'sleep 300; true' ${m} & echo ready; wait`, m);
    await until('ready', () => readFileSync(log, 'utf8').includes('ready') && processesWith(m).length === 2);
    const t0 = Date.now();
    const out = await h.stop(300);
    const took = Date.now() - t0;
    expect(out.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(out.gone).toBe(true);
    expect(took).toBeGreaterThanOrEqual(290); // the grace was waited out before SIGKILL
    expect(processesWith(m)).toEqual([]);
    expect((await h.exited).signal).toBe('SIGKILL');
  });

  it('killGroupNow cuts a long grace short', async () => {
    const m = uniq();
    const { h, log } = await run(`trap '' TERM; bash -c 'sleep 300; true' ${m} & echo ready; wait`, m);
    await until('ready', () => readFileSync(log, 'utf8').includes('ready'));
    const t0 = Date.now();
    const stopping = h.stop(600_000); // a grace no test could wait out
    await until('SIGTERM delivered', () => Date.now() - t0 > 50);
    h.killGroupNow();
    const out = await within(20_000, 'stop after killGroupNow', stopping);
    expect(out.gone).toBe(true);
    expect((await h.exited).signal).toBe('SIGKILL');
    expect(processesWith(m)).toEqual([]);
  });

  it('is idempotent and reports a group that is already gone', async () => {
    const { h } = await run('exit 0');
    await h.exited;
    const a = await h.stop(1000);
    expect(a).toMatchObject({ alreadyGone: true, gone: true, signals: [] });
    expect(await h.stop(1000)).toBe(a);
  });
});

describe('killAllGroupsSync', () => {
  it('SIGKILLs every live group synchronously', async () => {
    const m = uniq();
    const a = await run(`bash -c 'sleep 300; true' ${m}-1 & wait`, m);
    const b = await run(`trap '' TERM; bash -c 'sleep 300; true' ${m}-2 & wait`, m);
    await until('both groups', () => processesWith(m).length >= 4);
    expect(liveGroups()).toEqual(expect.arrayContaining([a.h.pgid, b.h.pgid]));
    expect(killAllGroupsSync()).toBeGreaterThanOrEqual(2);
    expect(liveGroups()).toEqual([]);
    await until('all gone', () => processesWith(m).length === 0, 2000);
    expect(a.h.isRunning()).toBe(false);
    expect(b.h.isRunning()).toBe(false);
  });
});

describe('exit hook', () => {
  it('kills every live group when the driver crashes', async () => {
    const m = uniq();
    const mod = resolve('src/util/process-group.js');
    const script = `
      import { spawnGroup } from ${JSON.stringify(mod)};
      await spawnGroup({ argv: ['bash', '-c', "bash -c 'sleep 300; true' ${m}-x & wait", '${m}'], logPath: ${JSON.stringify(logPath())} });
      await new Promise((r) => setTimeout(r, 100));
      throw new Error('driver crashed');`;
    const r = spawnSync(
      process.execPath,
      ['--import', './test/fixtures/ts-loader/register.js', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.stderr).toContain('driver crashed');
    expect(r.status).toBe(1);
    await until('group gone', () => processesWith(m).length === 0, 2000);
    expect(processesWith(m)).toEqual([]);
  });
});
