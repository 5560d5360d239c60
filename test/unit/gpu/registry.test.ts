import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim, lend, reapDead, release, releaseRun } from '../../../src/gpu/registry.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { MAX_ENTRIES, type ReservationRecord } from '../../../src/gpu/records.js';
import { deadPid, failure, gpus, plant as plantIn, req, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const records = () => readdirSync(dir).filter((f) => f.endsWith('.json'));

const plant = (over: Partial<ReservationRecord>) => plantIn(dir, over);

describe('claims', () => {
  it('hands out disjoint GPUs and records who holds them', async () => {
    const a = await claim(req(dir, { runId: 'run-a', task: 'ta', want: { count: 2 } }));
    const b = await claim(req(dir, { runId: 'run-b', task: 'tb', want: { count: 2 } }));
    expect(a.indices).toEqual([0, 1]);
    expect(b.indices).toEqual([2, 3]);
    const rec = JSON.parse(readFileSync(a.file, 'utf8')) as ReservationRecord;
    expect(rec).toMatchObject({
      runId: 'run-a',
      task: 'ta',
      pid: process.pid,
      host: os.hostname(),
      state: 'held',
    });
    expect(rec.uuids).toEqual(['GPU-test-0', 'GPU-test-1']);
    expect(rec.pidStartTime).toBe(processStartTime(process.pid));
  });

  it('fails fast naming the holders (run, task, pid) and the escape hatches', async () => {
    await claim(req(dir, { runId: 'run-a', task: 'server', want: { count: 3 } }));
    const e = await failure(claim(req(dir, { runId: 'run-b', task: 'client', want: { count: 2 } })));
    expect(e.code).toBe('GPU_UNAVAILABLE');
    expect(e.message).toContain("Task 'client' of run 'run-b' needs 2 GPU(s), but only 1 of 4 GPU(s)");
    expect(e.message).toContain(
      `GPU 0 (GPU-test-0): reserved by run 'run-a' task 'server' (pid ${process.pid})`,
    );
    expect(e.hint).toContain('--wait-for-gpus');
    expect(e.hint).toContain('SFLOW_GPU_RESERVATION=0');
  });

  it('claims exact indices in the written order, or fails when one is taken', async () => {
    const c = await claim(req(dir, { want: { indices: [3, 1] } }));
    expect(c.indices).toEqual([3, 1]);
    const e = await failure(claim(req(dir, { runId: 'run-b', want: { indices: [1, 2] } })));
    expect(e.message).toContain('GPU 1 (GPU-test-1): reserved by');
    await expect(claim(req(dir, { want: { indices: [9] } }))).rejects.toThrow(/does not have/);
  });

  it('prefers the planned indices for count claims', async () => {
    expect((await claim(req(dir, { want: { count: 2 }, prefer: [3, 2] }))).indices).toEqual([2, 3]);
  });

  it('releases so that the next claim can take the GPUs, and releaseRun sweeps the rest', async () => {
    const a = await claim(req(dir, { want: { count: 4 } }));
    await release(a);
    await release(a); // idempotent
    const b = await claim(req(dir, { want: { count: 4 } }));
    expect(b.indices).toEqual([0, 1, 2, 3]);
    expect(await releaseRun('run-a', dir)).toBe(1);
    expect(records()).toEqual([]);
  });
});

describe('stale records', () => {
  it('reaps a record whose owner is dead', async () => {
    const pid = deadPid();
    plant({ pid, pidStartTime: null });
    const c = await claim(req(dir, { want: { count: 4 } }));
    expect(c.reaped.map((r) => r.pid)).toEqual([pid]);
    expect(records()).toHaveLength(1);
  });

  it('reaps a record whose PID was reused by another process (start time differs)', async () => {
    const start = processStartTime(process.pid);
    expect(start).not.toBeNull();
    plant({ pidStartTime: (start as number) - 1 });
    plant({ runId: 'live-run' }); // same pid, right start time: alive
    const reaped = await reapDead(dir);
    expect(reaped.map((r) => r.runId)).toEqual(['old-run']);
    expect(records()).toHaveLength(1);
  });

  it('keeps our own records of another host (their processes cannot be checked from here)', async () => {
    plant({ pid: deadPid(), host: 'some-other-host', uuids: ['GPU-test-2'], indices: [2] });
    expect(await reapDead(dir)).toEqual([]);
    const e = await failure(claim(req(dir, { want: { count: 4 } })));
    expect(e.message).toContain('only 3 of 4');
  });

  it('ignores a record that names another uid than the owner of its file', async () => {
    plant({ uid: (process.getuid?.() ?? 0) + 1 }); // live pid, but a forged owner
    const c = await claim(req(dir, { want: { count: 4 } }));
    expect(c.indices).toEqual([0, 1, 2, 3]);
    expect(c.ignored).toHaveLength(1);
    expect(c.ignored[0].why).toMatch(/names uid \d+ but its file belongs to uid \d+/);
  });

  it('drops unreadable records', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(dir, 'garbage.json'), '{not json');
    await reapDead(dir);
    expect(records()).toEqual([]);
  });
});

describe('foreign workloads', () => {
  const apps = [{ gpuUuid: 'GPU-test-0', pid: 999, usedMemoryMiB: 2048 }];

  it('counts a GPU with a foreign process above the threshold as busy', async () => {
    const e = await failure(claim(req(dir, { want: { count: 4 }, apps })));
    expect(e.message).toContain('GPU 0 (GPU-test-0): busy with a foreign workload (pid 999 using 2048 MiB)');
    expect((await claim(req(dir, { want: { count: 3 }, apps }))).indices).toEqual([1, 2, 3]);
  });

  it('ignores it with SFLOW_GPU_IGNORE_FOREIGN or a higher threshold', async () => {
    const ignore = req(dir, { want: { count: 4 }, apps });
    ignore.settings = { ...ignore.settings, ignoreForeign: true };
    expect((await claim(ignore)).indices).toEqual([0, 1, 2, 3]);
    await releaseRun('run-a', dir);
    const higher = req(dir, { want: { count: 4 }, apps });
    higher.settings = { ...higher.settings, busyMemMiB: 4096 };
    expect((await claim(higher)).indices).toHaveLength(4);
  });

  it('treats memory in use without a visible process as busy', async () => {
    const e = await failure(claim(req(dir, { want: { count: 4 }, gpus: gpus(4, [0, 0, 9000]) })));
    expect(e.message).toContain('GPU 2 (GPU-test-2): busy with a foreign workload (9000 MiB in use)');
  });

  it('does not count sflow’s own reserved GPUs as foreign for its own run', async () => {
    const server = await claim(req(dir, { task: 'server', want: { count: 2 } }));
    await lend(server);
    const busy = [{ gpuUuid: 'GPU-test-0', pid: process.pid, usedMemoryMiB: 70_000 }];
    const client = await claim(req(dir, { task: 'client', want: { count: 2 }, prefer: [0, 1], apps: busy }));
    expect(client.indices).toEqual([0, 1]);
  });
});

describe('hand-over within a run', () => {
  it('lets the same run reuse lent GPUs while other runs still see them taken', async () => {
    const server = await claim(req(dir, { task: 'server', want: { count: 4 } }));
    expect(await lend(server)).toBe(true);
    const other = await failure(claim(req(dir, { runId: 'run-b', want: { count: 1 } })));
    expect(other.message).toContain('still running after READY');
    const client = await claim(req(dir, { task: 'client', want: { count: 4 } }));
    expect(client.indices).toEqual([0, 1, 2, 3]);
    await release(client);
    await release(server);
    expect(records()).toEqual([]);
  });

  it('keeps a hand-over record until the successor of the same run claims it', async () => {
    const a = await claim(req(dir, { task: 'a', want: { count: 2 } }));
    await release(a, { handover: true });
    await expect(claim(req(dir, { runId: 'run-b', want: { count: 3 } }))).rejects.toThrow(/only 2 of 4/);
    const b = await claim(req(dir, { task: 'b', want: { count: 2 } }));
    expect(b.indices).toEqual([0, 1]);
    expect(records()).toHaveLength(1); // the hand-over record is gone, b's remains
  });
});

describe('waiting', () => {
  it('waits with progress messages and succeeds once another claim is released', async () => {
    const holder = await claim(req(dir, { runId: 'run-a', task: 'holder', want: { count: 4 } }));
    const messages: string[] = [];
    let resolveFirst: () => void = () => undefined;
    const firstMessage = new Promise<void>((r) => (resolveFirst = r));
    const waiting = claim(
      req(dir, {
        runId: 'run-b',
        task: 'waiter',
        want: { count: 2 },
        waitSeconds: 20,
        onWait: (m) => {
          messages.push(m);
          resolveFirst();
        },
      }),
    );
    await firstMessage;
    await release(holder);
    const got = await waiting;
    expect(got.indices).toEqual([0, 1]);
    expect(messages[0]).toMatch(/^waiting for GPUs \(\d+ s left\)/);
    expect(messages[0]).toContain("reserved by run 'run-a' task 'holder'");
  });

  it('gives up at the deadline', async () => {
    await claim(req(dir, { want: { count: 4 } }));
    const t0 = Date.now();
    const e = await failure(claim(req(dir, { runId: 'run-b', want: { count: 1 }, waitSeconds: 0.3 })));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(e.message).toMatch(/after waiting \d+ s$/);
  });

  it('stops waiting when cancelled', async () => {
    await claim(req(dir, { want: { count: 4 } }));
    const ac = new AbortController();
    const p = claim(req(dir, { runId: 'run-b', want: { count: 1 }, waitSeconds: 0, signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    expect((await failure(p)).code).toBe('GPU_WAIT_CANCELLED');
  });
});

describe('hostile directory contents', () => {
  it('needs no lock: a planted .registry.lock (even dated in the future) changes nothing', async () => {
    mkdirSync(path.join(dir, '.registry.lock'));
    const future = new Date(Date.now() + 365 * 86_400_000);
    utimesSync(path.join(dir, '.registry.lock'), future, future);
    expect((await claim(req(dir, { want: { count: 2 } }))).indices).toEqual([0, 1]);
  });

  it('never opens a FIFO or follows a symbolic link posing as a record', async () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo.json')]);
    const outside = path.join(dir, 'outside');
    writeFileSync(outside, JSON.stringify({ nope: 1 }));
    symlinkSync(outside, path.join(dir, 'link.json'));
    const c = await claim(req(dir, { want: { count: 4 } }));
    expect(c.indices).toEqual([0, 1, 2, 3]);
    expect(readFileSync(outside, 'utf8')).toContain('nope'); // not removed through the link
  });

  it('refuses a flooded directory with a clear message instead of reading it all', async () => {
    for (let i = 0; i <= MAX_ENTRIES; i++) writeFileSync(path.join(dir, `f${i}`), '');
    const e = await failure(claim(req(dir)));
    expect(e.code).toBe('GPU_REGISTRY_FLOODED');
    expect(e.message).toContain(`more than ${MAX_ENTRIES}`);
  });
});

describe('registry directory', () => {
  const sub = () => path.join(dir, 'reg');

  it('creates a missing directory private to this user', async () => {
    await claim(req(sub()));
    expect(statSync(sub()).mode & 0o7777).toBe(0o700);
  });

  it('refuses a symbolic link and leaves its target alone', async () => {
    const target = path.join(dir, 'target');
    mkdirSync(target, { mode: 0o755 });
    symlinkSync(target, sub());
    const e = await failure(claim(req(sub())));
    expect(e.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(e.message).toContain('is a symbolic link');
    expect(e.hint).toContain('SFLOW_GPU_RESERVATION_DIR');
    expect(statSync(target).mode & 0o7777).toBe(0o755);
    expect(readdirSync(target)).toEqual([]);
  });

  it('refuses a directory others may write without the sticky bit, and never chmods it', async () => {
    mkdirSync(sub());
    chmodSync(sub(), 0o777);
    const e = await failure(claim(req(sub())));
    expect(e.message).toMatch(/writable by other users \(mode 0777\) without the sticky bit/);
    expect(statSync(sub()).mode & 0o7777).toBe(0o777);
    chmodSync(sub(), 0o1777); // the shared set-up: sticky
    expect((await claim(req(sub()))).indices).toEqual([0]);
  });

  it('refuses a registry below a directory others could swap it out of', async () => {
    const open = path.join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const e = await failure(claim(req(path.join(open, 'reg'))));
    expect(e.message).toContain(`the directory above it, ${open}, is writable by other users`);
  });

  it('refuses a path that is not a directory', async () => {
    writeFileSync(sub(), '');
    expect((await failure(claim(req(sub())))).message).toContain('is not a directory');
  });
});

describe('inventory through nvidia-smi', () => {
  const fakeBin = path.resolve(import.meta.dirname, '../../../assets/test-bin');
  const env = { PATH: `${fakeBin}:${process.env.PATH ?? ''}`, FAKE_NVIDIA_SMI_APPS: '0:4242:2048' };

  it("asks nvidia-smi (with the request's options) for the GPUs and their processes", async () => {
    const r = req(dir, { want: { count: 4 }, nvidiaSmi: { env } });
    delete r.gpus;
    const e = await failure(claim(r));
    // named by its process, which only the compute-apps query tells (memory.used alone would say "MiB in use")
    expect(e.message).toMatch(
      /GPU 0 \(GPU-[0-9a-f-]+\): busy with a foreign workload \(pid 4242 using 2048 MiB\)/,
    );
    const one = req(dir, { want: { count: 1 }, nvidiaSmi: { env } });
    delete one.gpus;
    expect((await claim(one)).indices).toEqual([1]);
  });

  it('fails with GPU_NO_NVIDIA_SMI when there is no nvidia-smi', async () => {
    const r = req(dir, { task: 'train', nvidiaSmi: { bin: path.join(fakeBin, 'no-such-nvidia-smi') } });
    delete r.gpus;
    const e = await failure(claim(r));
    expect(e.code).toBe('GPU_NO_NVIDIA_SMI');
    expect(e.message).toBe("Task 'train' needs GPUs, but nvidia-smi is not available");
    expect(e.phase).toBe('run');
  });
});

describe('records', () => {
  it("names the driver's keeper in the record", async () => {
    const keeper = { pid: process.pid, startTime: processStartTime(process.pid) };
    const c = await claim(req(dir, { keeper }));
    expect((JSON.parse(readFileSync(c.file, 'utf8')) as ReservationRecord).keeper).toEqual(keeper);
  });

  it('fails fast with the shortage alone, and the full hint', async () => {
    await claim(req(dir, { want: { count: 4 } }));
    const e = await failure(claim(req(dir, { runId: 'run-b', task: 'late', want: { count: 1 } })));
    expect(e.code).toBe('GPU_UNAVAILABLE');
    expect(e.phase).toBe('run');
    expect(e.message).toMatch(
      new RegExp(`GPU 3 \\(GPU-test-3\\): reserved by run 'run-a' task 't' \\(pid ${process.pid}\\)$`),
    );
    expect(e.hint).toBe(
      'wait with --wait-for-gpus <seconds> (0 = forever) or SFLOW_WAIT_FOR_GPUS; SFLOW_GPU_IGNORE_FOREIGN=1 ' +
        'ignores foreign workloads; SFLOW_GPU_BUSY_MEM_MIB (default 512) raises the busy threshold; ' +
        'SFLOW_GPU_RESERVATION=0 disables the reservation registry',
    );
  });
});
