/**
 * The task launcher (src/util/launcher/), both implementations: the protocol end to end (exact
 * exit codes and signals, output bytes in order, cwd, environment, start failures with their errno),
 * the lifeline (the driver SIGKILLed: every group stopped after the grace, TERM-ignoring ones
 * included) and a launcher killed under a live driver (its tasks stopped and reported, the next
 * launch starts a fresh launcher).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LAUNCH_WINDOW, LaunchFailure, LauncherProcess } from '../../src/util/launcher/client.js';
import { processesWith, until } from '../conformance/procs.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const loader = join(repo, 'test', 'fixtures', 'ts-loader', 'register.js');
const driver = join(repo, 'test', 'fixtures', 'launcher', 'driver.ts');
const dir = mkdtempSync(join(tmpdir(), 'sflow-launcher-'));
const markers: string[] = [];
const launchers: LauncherProcess[] = [];
let n = 0;

afterAll(() => {
  for (const l of launchers) l.process.kill('SIGKILL');
  for (const m of markers) for (const pid of processesWith(m)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const mark = () => {
  const m = `launchmark${process.pid}x${++n}x${Math.floor(Math.random() * 1e6)}`;
  markers.push(m);
  return m;
};

describe.each(['perl', 'node'] as const)('%s launcher', (kind) => {
  let lp: LauncherProcess;
  const start = async () => {
    lp ??= await LauncherProcess.start(kind);
    launchers.push(lp);
    return lp;
  };
  const run = async (script: string, extra: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) => {
    const log = join(dir, `${kind}-${++n}.log`);
    const s = await (
      await start()
    ).launch({
      argv: ['bash', '-c', script],
      cwd: extra.cwd ?? dir,
      env: extra.env ?? { PATH: process.env.PATH },
      logPath: log,
      graceMs: 1000,
    });
    return { ...s, log };
  };

  it('reports exact exit codes and signals, and lands output in order', async () => {
    const a = await run('echo one; echo two >&2; printf "three\\0four"; exit 42');
    expect(await a.exited).toEqual({ code: 42, signal: null });
    expect(readFileSync(a.log, 'latin1')).toBe('one\ntwo\nthree\0four');
    const b = await run('kill -TERM $$');
    expect(await b.exited).toEqual({ code: null, signal: 'SIGTERM' });
    const c = await run('exit 143'); // a code that looks like a signal stays a code
    expect(await c.exited).toEqual({ code: 143, signal: null });
    expect(a.startTime === null || Number.isInteger(a.startTime)).toBe(true);
  });

  it('runs each attempt in its own session with the given cwd and exactly the given environment', async () => {
    const a = await run('echo "$PWD|$FOO|${HOME-unset}|$(ps -o pgid= -p $$)|$(ps -o sid= -p $$)"', {
      env: { PATH: process.env.PATH, FOO: 'b ä\nr' },
      cwd: tmpdir(),
    });
    await a.exited;
    const [pwd, foo, home, pgid, sid] = readFileSync(a.log, 'utf8').trim().split('|');
    expect(pwd).toBe(tmpdir());
    expect(foo).toBe('b ä\nr');
    expect(home).toBe('unset');
    expect(Number(pgid)).toBe(a.pid);
    expect(Number(sid)).toBe(a.pid);
  });

  it('rejects with the errno when the program or the folder does not exist', async () => {
    const l = await start();
    const fail = (argv: string[], cwd = dir) =>
      l.launch({ argv, cwd, env: {}, logPath: join(dir, 'never.log'), graceMs: 1000 });
    await expect(fail(['/nonexistent/prog'])).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fail(['/nonexistent/prog'])).rejects.toBeInstanceOf(LaunchFailure);
    await expect(fail(['true'], '/nonexistent/dir')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fail([dir])).rejects.toMatchObject({ code: 'EACCES' });
    // still serving afterwards
    expect(await (await run('exit 3')).exited).toEqual({ code: 3, signal: null });
  });

  it('holds at most LAUNCH_WINDOW requests on the wire: the rest wait unencoded, in order, and all start', async () => {
    const l = await start();
    const total = LAUNCH_WINDOW * 4 + 3;
    const logs = Array.from({ length: total }, (_, i) => join(dir, `${kind}-window-${i}.log`));
    // each request carries a big environment: 200 of them encoded at once were 200 frames held
    const env = { PATH: process.env.PATH, BIG: 'x'.repeat(4096) };
    const all = logs.map((logPath, i) =>
      l.launch({ argv: ['sh', '-c', `echo ${i}`], cwd: dir, env, logPath, graceMs: 1000 }),
    );
    expect(l.unanswered).toBe(LAUNCH_WINDOW);
    expect(l.queued).toBe(total - LAUNCH_WINDOW);
    let most = 0;
    const started = await Promise.all(
      all.map((p) =>
        p.then((s) => {
          most = Math.max(most, l.unanswered);
          return s;
        }),
      ),
    );
    expect(most).toBeLessThanOrEqual(LAUNCH_WINDOW);
    expect(l.queued).toBe(0);
    const exits = await Promise.all(started.map((s) => s.exited));
    expect(exits.every((e) => e.code === 0)).toBe(true);
    expect(logs.map((f) => readFileSync(f, 'utf8').trim())).toEqual(logs.map((_, i) => String(i)));
    // every request started a process of its own
    const pids = started.map((s) => s.pid);
    expect(new Set(pids).size).toBe(total);
  });

  it('a request that cannot be framed fails alone when its turn comes; the others start', async () => {
    const l = await start();
    const ok = (i: number) =>
      l.launch({
        argv: ['true'],
        cwd: dir,
        env: {},
        logPath: join(dir, `${kind}-nul-${i}.log`),
        graceMs: 1000,
      });
    const before = Array.from({ length: LAUNCH_WINDOW + 2 }, (_, i) => ok(i));
    const bad = l.launch({
      argv: ['echo', 'a\0b'],
      cwd: dir,
      env: {},
      logPath: join(dir, 'never.log'),
      graceMs: 1000,
    });
    const after = ok(99);
    await expect(bad).rejects.toThrow(/NUL/);
    for (const s of await Promise.all([...before, after]))
      expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  it('SIGKILL of the driver: the lifeline stops every group, a TERM-ignoring one after the grace', async () => {
    const m = mark();
    const child = spawn(
      process.execPath,
      [
        '--import',
        loader,
        driver,
        dir,
        '700',
        `exec -a ${m} sleep 300`,
        `trap '' TERM; (exec -a ${m} sleep 301) & (exec -a ${m} sleep 302)`,
      ],
      { env: { ...process.env, SFLOW_LAUNCHER: kind }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    // sleep 300, and bash -c (its command line names the marker) with sleeps 301 and 302; the
    // driver's own command line holds the scripts too
    await until(
      () =>
        out.match(/started \d+/g)?.length === 2 &&
        processesWith(m).filter((p) => p !== child.pid).length === 4,
      20_000,
      'four processes',
    );
    child.kill('SIGKILL');
    await until(() => processesWith(m).length === 0, 700 + 2_000, 'nothing left');
  });

  it('the lifeline kills each group at its own grace: a long one (the run reaper) does not hold a short one', async () => {
    const short = mark();
    const long = mark();
    const child = spawn(
      process.execPath,
      [
        '--import',
        loader,
        driver,
        dir,
        '500',
        `trap '' TERM; exec -a ${short} sleep 300`,
        `@60000:trap '' TERM; (exec -a ${long} sleep 301)`,
      ],
      { env: { ...process.env, SFLOW_LAUNCHER: kind }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    await until(
      () =>
        out.match(/started \d+/g)?.length === 2 &&
        processesWith(short).filter((p) => p !== child.pid).length === 1 &&
        processesWith(long).filter((p) => p !== child.pid).length === 2,
      20_000,
      'both groups',
    );
    child.kill('SIGKILL');
    await until(() => processesWith(short).length === 0, 500 + 2_000, 'the short-grace group killed');
    // the long-grace group got TERM (which it ignores) and is still within its grace
    expect(processesWith(long).length).toBeGreaterThan(0);
    for (const pid of processesWith(long)) process.kill(pid, 'SIGKILL');
  });

  it('a launcher killed under a live driver: its tasks are stopped (whole group) and reported lost', async () => {
    const own = await LauncherProcess.start(kind);
    launchers.push(own);
    const m = mark();
    const s = await own.launch({
      // a leader and a child of it: the driver stops the task's whole group, not only its leader
      argv: ['bash', '-c', `(exec -a ${m} sleep 300) & exec -a ${m} sleep 300`],
      cwd: dir,
      env: { PATH: process.env.PATH },
      logPath: join(dir, `${m}.log`),
      graceMs: 1000,
    });
    await until(() => processesWith(m).length === 2, 10_000, 'the task and its child');
    own.process.kill('SIGKILL');
    const e = await s.exited;
    expect(e.code).toBeNull();
    expect(e.error).toMatch(/launcher .* exited .*lost its lifeline/);
    await until(() => processesWith(m).length === 0, 3_000, 'the task stopped');
    await expect(
      own.launch({ argv: ['true'], cwd: dir, env: {}, logPath: join(dir, 'x.log'), graceMs: 1 }),
    ).rejects.toThrow(/launcher exited/);
  });
});
