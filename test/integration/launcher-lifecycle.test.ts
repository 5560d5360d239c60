/**
 * The task launcher's own life (src/util/launcher/client.ts), beside the protocol tests of
 * launcher.test.ts: it holds the driver's event loop only while an answer or an exit is due, its
 * start is bounded and a start failure says why (exit, signal, stderr), it runs detached in `/`,
 * and when it dies every request — written or still queued — fails with the reason, and a task that
 * ignores TERM is still stopped. Written to kill the mutants that survived these paths
 * (docs/testing.md, "Mutation testing").
 */
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { LAUNCH_WINDOW, LauncherProcess } from '../../src/util/launcher/client.js';
import { processesWith, until } from '../conformance/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-launcher-life-'));
const launchers: LauncherProcess[] = [];
const markers: string[] = [];
let n = 0;

afterEach(() => {
  vi.useRealTimers();
});

afterAll(() => {
  for (const l of launchers) l.process.kill('SIGKILL');
  for (const m of markers) for (const pid of processesWith(m)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const mark = () => {
  const m = `lifemark${process.pid}x${++n}x${Math.floor(Math.random() * 1e6)}`;
  markers.push(m);
  return m;
};

/** the handles of this process that keep its event loop alive, by type */
function held(): { proc: number; pipe: number } {
  const r = process.getActiveResourcesInfo();
  return {
    proc: r.filter((t) => t === 'ProcessWrap').length,
    pipe: r.filter((t) => t === 'PipeWrap').length,
  };
}

/** runs `fn` with PATH set to a folder holding only `perl` (a script), or nothing */
async function withPerl<T>(script: string | undefined, fn: () => Promise<T>): Promise<T> {
  const bin = mkdtempSync(join(dir, 'bin-'));
  if (script !== undefined) {
    writeFileSync(join(bin, 'perl'), `#!/bin/sh\n${script}\n`);
    chmodSync(join(bin, 'perl'), 0o755);
  }
  const path = process.env.PATH;
  process.env.PATH = bin;
  try {
    return await fn();
  } finally {
    process.env.PATH = path;
  }
}

const request = (argv: string[], log = join(dir, `t${++n}.log`)) => ({
  argv,
  cwd: dir,
  env: { PATH: process.env.PATH },
  logPath: log,
  graceMs: 1000,
});

describe.each(['perl', 'node'] as const)('%s launcher', (kind) => {
  const start = async () => {
    const l = await LauncherProcess.start(kind);
    launchers.push(l);
    return l;
  };

  it('holds the event loop only while an answer or an exit is due', async () => {
    const base = held();
    const l = await start();
    // idle: the launcher's process and its output pipes are let go (its stdin is written only)
    const idle = held();
    expect(idle.proc).toBe(base.proc);
    expect(idle.pipe).toBeLessThanOrEqual(base.pipe + 1);
    const p = l.launch(request(['sh', '-c', 'sleep 0.3']));
    // a start is due: the process and its stdout are held
    expect(held()).toEqual({ proc: idle.proc + 1, pipe: idle.pipe + 1 });
    const s = await p;
    expect(held()).toEqual({ proc: idle.proc + 1, pipe: idle.pipe + 1 }); // an exit is due
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(held()).toEqual(idle);
    // a start that fails, more than a window of them: each answer lets the next request out
    const missing = Array.from({ length: LAUNCH_WINDOW + 3 }, () => l.launch(request(['/nonexistent/prog'])));
    for (const r of await Promise.allSettled(missing))
      expect(r.status === 'rejected' && (r.reason as { code?: string }).code).toBe('ENOENT');
    expect(held()).toEqual(idle);
    // a request that cannot be framed fails without a round trip
    await expect(l.launch(request(['echo', 'a\0b']))).rejects.toThrow(/NUL/);
    expect(held()).toEqual(idle);
  });

  it('runs in its own session with `/` as its working directory', async () => {
    const l = await start();
    expect(readlinkSync(`/proc/${l.pid}/cwd`)).toBe('/');
    const stat = readFileSync(`/proc/${l.pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // state ppid pgrp session: a leader of its own group and session
    expect(Number(fields[2])).toBe(l.pid);
    expect(Number(fields[3])).toBe(l.pid);
  });

  it('dies with its requests: the written and the queued ones fail with the reason', async () => {
    const l = await start();
    const total = LAUNCH_WINDOW * 3;
    // short tasks: one the launcher forked but never reported would outlive it (it has no pid here)
    const all = Array.from({ length: total }, () => l.launch(request(['true'])));
    expect(l.queued).toBe(total - LAUNCH_WINDOW);
    l.process.kill('SIGKILL');
    const settled = await Promise.allSettled(all);
    const failed = settled.filter((r) => r.status === 'rejected');
    // the queued ones were never written; a written one may have started before the launcher died
    expect(failed.length).toBeGreaterThanOrEqual(total - LAUNCH_WINDOW);
    for (const r of failed)
      expect(String(r.reason)).toMatch(/^Error: the sflow launcher exited \(SIGKILL\)$/);
    for (const r of settled)
      if (r.status === 'fulfilled') {
        // reported before the launcher died, or lost with it
        const e = await r.value.exited;
        expect(e.code === 0 || /exited \(SIGKILL\)/.test(e.error ?? '')).toBe(true);
      }
    expect(l.queued).toBe(0);
  });

  it('a launcher whose stdin closes exits; the driver says so with its exit code', async () => {
    const l = await start();
    const exited = new Promise((ok) => l.process.once('exit', ok));
    l.process.stdin.end();
    await exited;
    await expect(l.launch(request(['true']))).rejects.toThrow(/^the sflow launcher exited \(code 0\)$/);
  });

  it('a lost task that ignores TERM is still stopped', async () => {
    const l = await start();
    const m = mark();
    const s = await l.launch(request(['bash', '-c', `trap '' TERM; exec -a ${m} sleep 300`]));
    await until(() => processesWith(m).length === 1, 10_000, 'the task');
    l.process.kill('SIGKILL');
    expect((await s.exited).error).toMatch(/lost its lifeline/);
    await until(() => processesWith(m).length === 0, 3_000, 'the TERM-ignoring task stopped');
  });

  it('the ready wait is bounded; a launcher that answered outlives the bound', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const slow = LauncherProcess.start(kind);
    vi.advanceTimersByTime(10_000); // before any I/O could bring its ready line
    await expect(slow).rejects.toThrow(new RegExp(`^${kind} launcher: no answer within 10000 ms`));
    const l = await start();
    vi.advanceTimersByTime(60_000);
    vi.useRealTimers();
    const s = await l.launch(request(['true']));
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  it('keeps no slot per request answered long ago', async () => {
    const l = await start();
    const bad = Array.from({ length: 3000 }, () => l.launch(request(['echo', 'a\0b'])));
    expect((await Promise.allSettled(bad)).every((r) => r.status === 'rejected')).toBe(true);
    const queue = Reflect.get(l, 'queue') as unknown[];
    expect(queue.length).toBeLessThanOrEqual(1025);
    // still serving
    expect(await (await l.launch(request(['true']))).exited).toEqual({ code: 0, signal: null });
  });
});

describe('a perl launcher that does not start', () => {
  it('reports its exit code and the end of its stderr', async () => {
    const e = await withPerl('printf "%05000d" 0 >&2; echo " perl: broken" >&2; exit 3', () =>
      LauncherProcess.start('perl').then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
    const msg = String((e as Error).message);
    expect(msg).toMatch(/^perl launcher: exited before it was ready \(code 3\): 0+ perl: broken$/);
    const stderr = msg.slice(msg.indexOf('): ') + 3);
    expect(stderr.length).toBeLessThanOrEqual(2000);
    expect(stderr.length).toBeGreaterThan(1900);
  });

  it('reports the signal that killed it', async () => {
    await withPerl('kill -KILL $$', async () => {
      await expect(LauncherProcess.start('perl')).rejects.toThrow(
        /^perl launcher: exited before it was ready \(SIGKILL\)$/,
      );
    });
  });

  it('reports a perl that is not there', async () => {
    await withPerl(undefined, async () => {
      await expect(LauncherProcess.start('perl')).rejects.toThrow(/^perl launcher: spawn perl ENOENT$/);
    });
  });
});
