/**
 * Two real processes share one registry directory and one (fake) 4-GPU machine: their claims are
 * disjoint, and when one holder is SIGKILLed the other's next claim reaps its record and takes its
 * GPUs; several processes claiming at the same moment never share a GPU.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Claimer, ROOT } from '../helpers/claimer.js';

let dir: string;
let children: Claimer[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sflow-gpu-registry-it-'));
});
afterEach(async () => {
  for (const c of children) await c.stop();
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

  it('never hands one GPU to two processes claiming at the same moment (optimistic claims, no lock)', async () => {
    const marks = mkdtempSync(path.join(os.tmpdir(), 'sflow-gpu-marks-'));
    const env = {
      ...process.env,
      PATH: `${path.join(ROOT, 'assets/test-bin')}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_GPUS: '4',
      SFLOW_GPU_RESERVATION_DIR: dir,
      MARK_DIR: marks,
    };
    try {
      children = ['r1', 'r2', 'r3'].map((r) => new Claimer(r, env));
      for (const c of children) expect((await c.next()).ready).toBe(true);
      for (const c of children) c.send('stress 25 2');
      const replies = await Promise.all(children.map((c) => c.next(90_000)));
      for (const r of replies) {
        expect(r.ok, r.error).toBe(true);
        expect(r.overlaps).toEqual([]);
      }
      expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toEqual([]);
    } finally {
      rmSync(marks, { recursive: true, force: true });
    }
  }, 120_000);
});
