import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { GpuInfo, GpuProcess } from '../../../src/gpu/nvidia-smi.js';
import type { ClaimRequest } from '../../../src/gpu/registry.js';
import { recordFileName, writeRecord, type ReservationRecord } from '../../../src/gpu/records.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { SflowError } from '../../../src/config/errors.js';

export function gpus(n: number, used: number[] = []): GpuInfo[] {
  return Array.from({ length: n }, (_, i) => ({
    index: i,
    uuid: `GPU-test-${i}`,
    name: 'Fake GPU',
    memoryTotalMiB: 81559,
    memoryUsedMiB: used[i] ?? 0,
  }));
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sflow-gpu-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** a claim request against a static inventory and a private registry directory */
export function req(dir: string, over: Partial<ClaimRequest> & { apps?: GpuProcess[] } = {}): ClaimRequest {
  return {
    runId: 'run-a',
    task: 't',
    want: { count: 1 },
    gpus: gpus(4),
    settings: { dir, busyMemMiB: 512, ignoreForeign: false, waitSeconds: undefined },
    pollMs: 20,
    progressMs: 50,
    ...over,
  };
}

/** pid of a process that has already exited (and been reaped) */
export function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(r.stdout);
}

/**
 * Write a believable record of this process (run `old-run`, GPUs 0 and 1, `held`) into `dir`,
 * changed by `over`. Returns the record and its file.
 */
export function plant(
  dir: string,
  over: Partial<ReservationRecord> = {},
): ReservationRecord & { file: string } {
  const r: ReservationRecord = {
    version: 1,
    runId: 'old-run',
    task: 'old-task',
    host: os.hostname(),
    pid: process.pid,
    pidStartTime: processStartTime(process.pid),
    uid: process.getuid?.() ?? null,
    uuids: ['GPU-test-0', 'GPU-test-1'],
    indices: [0, 1],
    state: 'held',
    createdAt: new Date().toISOString(),
    ...over,
  };
  const file = path.join(dir, recordFileName(r));
  writeRecord(file, r);
  return { ...r, file };
}

/** the SflowError a promise rejects with (fails the test when it resolves or throws anything else) */
export async function failure(p: Promise<unknown>): Promise<SflowError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof SflowError)) throw new Error(`expected an SflowError, got ${String(e)}`);
  return e;
}
