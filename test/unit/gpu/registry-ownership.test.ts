/**
 * Whose records the registry touches: the run-end sweep removes only this process's records of
 * this run on this host, and a claim that takes GPUs from this run's own hand-over record trims
 * that record to what is left (its indices kept in step) or removes it once it is empty.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim, release, releaseRun } from '../../../src/gpu/registry.js';
import { recordFileName, writeRecord, type ReservationRecord } from '../../../src/gpu/records.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { req, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

function records(): ReservationRecord[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ReservationRecord);
}

function plant(over: Partial<ReservationRecord>): void {
  const r: ReservationRecord = {
    version: 1,
    runId: 'run-a',
    task: 'planted',
    host: os.hostname(),
    pid: process.pid,
    pidStartTime: processStartTime(process.pid),
    uid: process.getuid?.() ?? null,
    uuids: ['GPU-test-0'],
    indices: [0],
    state: 'held',
    createdAt: new Date().toISOString(),
    ...over,
  };
  writeRecord(path.join(dir, recordFileName(r)), r);
}

const who = (r: ReservationRecord) =>
  `${r.runId}/${r.task}/${r.pid === process.pid ? 'me' : 'other'}/${r.host}`;

describe('releaseRun', () => {
  it("removes this process's records of the run on this host, and nobody else's", async () => {
    const here = os.hostname();
    plant({ task: 'mine-1' });
    plant({ task: 'mine-2', state: 'handover' });
    plant({ runId: 'run-b', task: 'other-run' });
    plant({ task: 'other-pid', pid: process.ppid, pidStartTime: processStartTime(process.ppid) });
    plant({ task: 'other-host', host: `not-${here}` });
    expect(await releaseRun('run-a', dir)).toBe(2);
    expect(records().map(who).sort()).toEqual(
      [
        `run-a/other-host/me/not-${here}`,
        `run-a/other-pid/other/${here}`,
        `run-b/other-run/me/${here}`,
      ].sort(),
    );
    expect(await releaseRun('run-a', dir)).toBe(0);
    expect(await releaseRun('run-a', path.join(dir, 'missing'))).toBe(0);
  });
});

describe('hand-over trimming', () => {
  it("a successor taking part of the run's hand-over record leaves the rest in it, indices in step", async () => {
    const a = await claim(req(dir, { task: 'a', want: { indices: [1, 2, 3] } }));
    await release(a, { handover: true });
    const b = await claim(req(dir, { task: 'b', want: { indices: [2] } }));
    expect(b.uuids).toEqual(['GPU-test-2']);
    const left = records().find((r) => r.state === 'handover');
    expect(left).toMatchObject({ task: 'a', uuids: ['GPU-test-1', 'GPU-test-3'], indices: [1, 3] });
    // another run still sees the hand-over GPUs as taken
    await expect(claim(req(dir, { runId: 'run-b', want: { indices: [1] } }))).rejects.toThrow(/GPU/);
    const c = await claim(req(dir, { task: 'c', want: { indices: [1, 3] } }));
    expect(c.indices).toEqual([1, 3]);
    expect(records().filter((r) => r.state === 'handover')).toEqual([]);
    expect(
      records()
        .map((r) => r.task)
        .sort(),
    ).toEqual(['b', 'c']);
    await release(b);
    await release(c);
    expect(records()).toEqual([]);
  });
});
