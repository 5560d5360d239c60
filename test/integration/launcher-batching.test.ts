/**
 * The launcher protocol batched both ways (issue 28): the launch requests of one event-loop turn
 * leave the driver in one write, and the replies a launcher learns in one pass (here: five exits it
 * finds at once) reach the driver in one write, not one a line. The driver's writes are counted at
 * its end of the pipe; the Perl launcher's, by its own count of write calls (`syscw` in
 * /proc/<pid>/io).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LauncherProcess, type Started } from '../../src/util/launcher/client.js';
import { readProcStat } from '../../src/util/process-liveness.js';
import { until } from '../conformance/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-launcher-batch-'));
const launchers: LauncherProcess[] = [];
let n = 0;

afterAll(() => {
  for (const l of launchers) {
    try {
      process.kill(l.pid, 'SIGCONT');
    } catch {
      // gone already
    }
    l.process.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

/** write calls the process has made so far (Linux /proc/<pid>/io) */
const writes = (pid: number): number => {
  const m = /^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'latin1'));
  if (!m) throw new Error(`no syscw in /proc/${pid}/io`);
  return Number(m[1]);
};
const state = (pid: number): string | undefined => readProcStat(pid)?.state;
const ioReadable = (() => {
  try {
    writes(process.pid);
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!ioReadable)('the launcher protocol, batched (needs /proc/<pid>/io)', () => {
  describe.each(['perl', 'node'] as const)('%s launcher', (kind) => {
    const start = async () => {
      const l = await LauncherProcess.start(kind);
      launchers.push(l);
      return l;
    };
    const request = (argv: string[]) => ({
      argv,
      cwd: dir,
      env: { PATH: process.env.PATH },
      logPath: join(dir, `${kind}-${++n}.log`),
      graceMs: 1000,
    });

    it('writes the launch requests of one turn in one write, and those of a later turn in another', async () => {
      const l = await start();
      const sent: number[] = [];
      const stdin = l.process.stdin;
      const write = stdin.write.bind(stdin) as (b: Buffer) => boolean;
      stdin.write = ((b: Buffer) => {
        sent.push(b.length);
        return write(b);
      }) as typeof stdin.write;
      const first = Array.from({ length: 5 }, () => l.launch(request(['true'])));
      const done = await Promise.all(first);
      expect(sent).toHaveLength(1);
      const second = await Promise.all([l.launch(request(['true'])), l.launch(request(['true']))]);
      expect(sent).toHaveLength(2);
      for (const s of [...done, ...second]) expect(await s.exited).toEqual({ code: 0, signal: null });
      // the frames were whole: seven different pids, all exited 0
      expect(new Set([...done, ...second].map((s) => s.pid)).size).toBe(7);
    });

    it('reports the exits it finds in one pass in one write', async () => {
      const l = await start();
      const fifo = join(dir, `${kind}-fifo`);
      execFileSync('mkfifo', [fifo]);
      const tasks: Started[] = await Promise.all(
        Array.from({ length: 5 }, () => l.launch(request(['sh', '-c', `cat '${fifo}' > /dev/null`]))),
      );
      const lines: string[] = [];
      l.process.stdout.on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
      process.kill(l.pid, 'SIGSTOP');
      let before: number;
      try {
        await until(() => state(l.pid) === 'T', 10_000, 'the launcher to stop');
        // every reader gets end of file when the one writer closes: the five exit while it is stopped
        expect(spawnSync('sh', ['-c', `echo x > '${fifo}'`], { timeout: 10_000 }).status).toBe(0);
        await until(() => tasks.every((t) => state(t.pid) === 'Z'), 10_000, 'the five to exit');
        before = writes(l.pid);
      } finally {
        process.kill(l.pid, 'SIGCONT');
      }
      for (const t of tasks) expect(await t.exited).toEqual({ code: 0, signal: null });
      const after = writes(l.pid);
      expect(lines.filter((s) => s.startsWith('X ')).sort()).toEqual(
        tasks.map((t) => `X ${t.pid} 0 0`).sort(),
      );
      // Perl: one write of the five lines, beside the wake-ups its SIGCHLD handler writes to itself
      // (one a signal; a line at a time it was seven). Node's count also holds libuv's own wake-ups
      // of its threads, so only the lines are checked there.
      if (kind === 'perl') expect(after - before).toBeLessThanOrEqual(3);
      expect(existsSync(fifo)).toBe(true);
    });
  });
});
