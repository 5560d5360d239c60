/**
 * Two real processes share one registry directory and one (fake) 4-GPU machine: their claims are
 * disjoint, and when one holder is SIGKILLed the other's next claim reaps its record and takes its
 * GPUs. Children run the TypeScript sources under plain Node 20 through the ts-loader fixture
 * (module hooks transpiling with the project's own `typescript`), so no build step is needed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LOADER = path.join(ROOT, 'test/fixtures/ts-loader/register.js');
const CHILD = path.join(ROOT, 'test/fixtures/gpu-registry/claimer.ts');

interface Reply {
  ok?: boolean;
  ready?: boolean;
  pid?: number;
  indices?: number[];
  uuids?: string[];
  reaped?: number[];
  error?: string;
}

class Claimer {
  readonly proc: ChildProcessWithoutNullStreams;
  private readonly replies: Reply[] = [];
  private waiter: (() => void) | undefined;
  readonly exited: Promise<void>;

  constructor(runId: string, env: NodeJS.ProcessEnv) {
    this.proc = spawn(process.execPath, ['--import', LOADER, CHILD, runId], { cwd: ROOT, env });
    createInterface({ input: this.proc.stdout }).on('line', (l) => {
      this.replies.push(JSON.parse(l) as Reply);
      this.waiter?.();
    });
    this.exited = new Promise((r) => this.proc.once('exit', () => r()));
  }

  /** next JSON line, or throw at the deadline */
  async next(timeoutMs = 15_000): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    while (this.replies.length === 0) {
      if (Date.now() > deadline)
        throw new Error(`no reply from claimer ${this.proc.pid} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 100);
      });
    }
    return this.replies.shift() as Reply;
  }

  send(line: string): void {
    this.proc.stdin.write(line + '\n');
  }
}

let dir: string;
let children: Claimer[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sflow-gpu-registry-it-'));
});
afterEach(async () => {
  for (const c of children) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await c.exited;
  }
  children = [];
  rmSync(dir, { recursive: true, force: true });
});

describe('GPU registry across processes', () => {
  it('keeps concurrent claims disjoint and reaps a SIGKILLed holder', async () => {
    const env = {
      ...process.env,
      PATH: `${path.join(ROOT, 'assets/test-bin')}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_GPUS: '4',
      SFLOW_GPU_RESERVATION_DIR: dir,
    };
    const a = new Claimer('run-a', env);
    const b = new Claimer('run-b', env);
    children = [a, b];
    expect((await a.next()).ready).toBe(true);
    expect((await b.next()).ready).toBe(true);

    a.send('claim worker 2');
    b.send('claim worker 2');
    const [ra, rb] = await Promise.all([a.next(), b.next()]);
    expect(ra.ok, ra.error).toBe(true);
    expect(rb.ok, rb.error).toBe(true);
    const all = [...(ra.uuids ?? []), ...(rb.uuids ?? [])];
    expect(ra.uuids).toHaveLength(2);
    expect(rb.uuids).toHaveLength(2);
    expect(new Set(all).size).toBe(4);
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(2);

    // the machine is full: a further claim fails fast and names the holder
    b.send('claim extra 1');
    const full = await b.next();
    expect(full.ok).toBe(false);
    expect(full.error).toContain(`reserved by run 'run-a' task 'worker' (pid ${a.proc.pid})`);

    a.proc.kill('SIGKILL');
    await a.exited;
    b.send('claim second 2');
    const rb2 = await b.next();
    expect(rb2.ok, rb2.error).toBe(true);
    expect(rb2.reaped).toEqual([a.proc.pid]);
    expect([...(rb2.uuids ?? [])].sort()).toEqual([...(ra.uuids ?? [])].sort());
  });
});
