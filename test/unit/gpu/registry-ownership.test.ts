/**
 * Whose records the registry touches: the run-end sweep removes only this process's records of
 * this run on this host, and a claim that takes GPUs from this run's own hand-over record trims
 * that record to what is left (its indices kept in step) or removes it once it is empty.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim, lend, release, releaseRun } from '../../../src/gpu/registry.js';
import type { ReservationRecord } from '../../../src/gpu/records.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { plant as plantIn, req, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

function records(): ReservationRecord[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ReservationRecord);
}

const plant = (over: Partial<ReservationRecord>) =>
  plantIn(dir, { runId: 'run-a', task: 'planted', uuids: ['GPU-test-0'], indices: [0], ...over });

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

describe('lent records', () => {
  it("a task of the run taking GPUs of the run's lent record leaves that record whole", async () => {
    const server = await claim(req(dir, { task: 'server', want: { count: 4 } }));
    expect(await lend(server)).toBe(true);
    const client = await claim(req(dir, { task: 'client', want: { indices: [1, 2] } }));
    expect(client.indices).toEqual([1, 2]);
    expect(records().find((r) => r.task === 'server')).toMatchObject({
      state: 'lent',
      uuids: ['GPU-test-0', 'GPU-test-1', 'GPU-test-2', 'GPU-test-3'],
      indices: [0, 1, 2, 3],
    });
  });
});

describe('state changes of a claim', () => {
  it("lend and a hand-over release change only this process's own record", async () => {
    const c = await claim(req(dir, { task: 'mine' }));
    const other = { ...JSON.parse(readFileSync(c.file, 'utf8')), pid: process.ppid } as ReservationRecord;
    other.pidStartTime = processStartTime(process.ppid);
    writeFileSync(c.file, JSON.stringify(other));
    expect(await lend(c)).toBe(false);
    expect(JSON.parse(readFileSync(c.file, 'utf8'))).toEqual(other);
    await release(c, { handover: true }); // not ours to hand over: a plain release
    expect(records()).toEqual([]);
    expect(await lend(c)).toBe(false); // gone
  });

  it('lend that cannot write leaves the claim held and says so', async () => {
    const c = await claim(req(dir, { task: 'mine' }));
    // a name so long that the temp file written beside it (name + 17 characters) cannot exist
    const long = path.join(dir, `${'x'.repeat(245)}.json`);
    renameSync(c.file, long);
    const held = { ...c, file: long };
    expect(await lend(held)).toBe(false);
    expect(JSON.parse(readFileSync(long, 'utf8'))).toMatchObject({ task: 'mine', state: 'held' });
    await release(held, { handover: true }); // cannot rewrite it either: removed instead
    expect(records()).toEqual([]);
  });
});
