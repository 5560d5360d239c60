/**
 * Cross-process GPU reservation registry (backends.md §3.7): concurrent sflow runs — and concurrent
 * tasks of one run — on one machine claim disjoint physical GPUs, keyed by nvidia-smi UUID. Serves
 * the Docker backend (single local host) and the local backend.
 *
 * There is no registry-wide lock (a lock in a shared directory is one another user can hold
 * forever). A claim is decided optimistically instead: read the records (trust.ts: dead owners
 * reaped, unbelievable records ignored), pick free GPUs, publish a `claiming` record, read again,
 * and keep the claim only if no other record overlaps it — otherwise withdraw and retry after a
 * random pause. Two claims for one GPU cannot both win: each reads after publishing, so the later
 * reader sees the earlier record. Waiting (`waitSeconds`) repeats that on a short poll.
 */
import os from 'node:os';
import path from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import {
  queryComputeApps,
  queryGpus,
  type GpuInfo,
  type GpuProcess,
  type NvidiaSmiOptions,
} from './nvidia-smi.js';
import type { Keeper } from './keeper.js';
import { processStartTime } from '../util/process-liveness.js';
import {
  listRecords,
  readRecord,
  recordFileName,
  removeRecord,
  writeRecord,
  type ReservationRecord,
  type StoredRecord,
} from './records.js';
import { openRegistryDir } from './registry-dir.js';
import { registrySettings, type RegistrySettings } from './settings.js';
import { describeShortage, pickGpus, type Inventory, type Self } from './select.js';
import { census, type Ignored } from './trust.js';
import { sleep } from '../util/sleep.js';

export type { Inventory };

export interface ClaimRequest {
  runId: string;
  task: string;
  /** `count` GPUs, or exactly these nvidia-smi `indices` */
  want: { count?: number; indices?: number[] };
  /** indices the plan chose; preferred for `count` claims when free */
  prefer?: number[];
  /** static inventory (tests); by default nvidia-smi is queried on every attempt */
  gpus?: GpuInfo[];
  apps?: GpuProcess[];
  probe?: () => Promise<Inventory>;
  /** undefined: fail fast; 0: wait forever; N: wait at most N s (default from the settings) */
  waitSeconds?: number;
  /** progress while waiting (first at once, then every `progressMs`) */
  onWait?: (message: string) => void;
  settings?: Partial<RegistrySettings>;
  pollMs?: number;
  progressMs?: number;
  signal?: AbortSignal;
  nvidiaSmi?: NvidiaSmiOptions;
  /** the driver's task launcher, which outlives it until every task group is gone */
  keeper?: Keeper;
}

export interface Claim {
  runId: string;
  task: string;
  dir: string;
  file: string;
  uuids: string[];
  /** nvidia-smi indices, in the order claimed (CUDA_VISIBLE_DEVICES / --gpus device= order) */
  indices: number[];
  /** records of dead owners removed while claiming */
  reaped: ReservationRecord[];
  /** records set aside as unbelievable (forged owner, borrowed pid, …), with why */
  ignored: Ignored[];
}

const FOREVER_WARNING_MS = 10 * 60_000;
/** rounds lost to simultaneous claims before it counts as a shortage */
const MAX_CONTENDED_ROUNDS = 50;
const uid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

function settingsOf(over?: Partial<RegistrySettings>): RegistrySettings {
  return { ...registrySettings(), ...over };
}

/** Reap records of dead owners now (a claim does this too). Returns the removed records. */
export function reapDead(dir = registrySettings().dir): Promise<ReservationRecord[]> {
  return Promise.resolve(census(openRegistryDir(dir)).reaped);
}

async function inventory(req: ClaimRequest): Promise<Inventory> {
  if (req.probe) return req.probe();
  if (req.gpus) return { gpus: req.gpus, apps: req.apps ?? [] };
  const o: NvidiaSmiOptions = { ...req.nvidiaSmi, signal: req.signal };
  const gpus = await queryGpus(o);
  if (gpus === null) {
    throw new SflowError(
      'GPU_NO_NVIDIA_SMI',
      `Task '${req.task}' needs GPUs, but nvidia-smi is not available`,
      {
        phase: 'run',
      },
    );
  }
  let apps: GpuProcess[] = [];
  try {
    apps = await queryComputeApps(o);
  } catch {
    // some drivers reject this query; the memory threshold still marks busy GPUs
  }
  return { gpus, apps };
}

type Attempt = { claim: Claim } | { shortage: string } | { contended: string };

/** records this process may take GPUs from: its own run's lent / hand-over records */
function takeable(r: ReservationRecord, self: Self): boolean {
  return (
    r.runId === self.runId &&
    r.pid === self.pid &&
    r.host === self.host &&
    (r.state === 'lent' || r.state === 'handover')
  );
}

/** GPUs taken over from this run's own hand-over records leave those records */
function trimHandovers(live: StoredRecord[], taken: Set<string>, self: Self): void {
  for (const h of live) {
    const r = h.record;
    if (r.state !== 'handover' || !takeable(r, self)) continue;
    const keep = r.uuids.filter((u) => !taken.has(u));
    if (keep.length === r.uuids.length) continue;
    if (keep.length === 0) removeRecord(h.file);
    else
      writeRecord(h.file, { ...r, uuids: keep, indices: r.indices.filter((_, i) => !taken.has(r.uuids[i])) });
  }
}

/** one optimistic round (synchronous after the inventory, so claims of one process never interleave) */
async function attempt(req: ClaimRequest, s: RegistrySettings, dir: string): Promise<Attempt> {
  const inv = await inventory(req);
  const { live, reaped, ignored } = census(dir);
  const self: Self = { runId: req.runId, host: os.hostname(), pid: process.pid };
  const picked = pickGpus(req.want, req.prefer ?? [], inv, live, self, s, req.task);
  if (!picked.ok) return { shortage: describeShortage(req, inv, live, picked, { ...s, dir }) };
  const record: ReservationRecord = {
    version: 1,
    runId: req.runId,
    task: req.task,
    host: self.host,
    pid: self.pid,
    pidStartTime: processStartTime(self.pid),
    uid: uid(),
    uuids: picked.gpus.map((g) => g.uuid),
    indices: picked.gpus.map((g) => g.index),
    state: 'claiming',
    createdAt: new Date().toISOString(),
    ...(req.keeper ? { keeper: req.keeper } : {}),
  };
  const file = path.join(dir, recordFileName(record));
  writeRecord(file, record);
  const taken = new Set(record.uuids);
  const after = census(dir);
  const rival = after.live.find(
    (o) => o.file !== file && !takeable(o.record, self) && o.record.uuids.some((u) => taken.has(u)),
  );
  if (rival) {
    removeRecord(file);
    const r = rival.record;
    return {
      contended: `run '${r.runId}' task '${r.task}' (pid ${r.pid}) claimed the same GPU(s) at the same time`,
    };
  }
  writeRecord(file, { ...record, state: 'held' });
  trimHandovers(after.live, taken, self);
  const claim: Claim = {
    runId: req.runId,
    task: req.task,
    dir,
    file,
    uuids: record.uuids,
    indices: record.indices,
    reaped: [...reaped, ...after.reaped],
    ignored,
  };
  return { claim };
}

/**
 * Claim GPUs for one task. Fails fast with an SflowError naming which GPUs are held by which
 * run/task/pid (or busy with foreign work) unless waiting is on; every wait ends at its deadline.
 */
export async function claim(req: ClaimRequest): Promise<Claim> {
  const s = settingsOf(req.settings);
  const dir = openRegistryDir(s.dir);
  const wait = req.waitSeconds !== undefined ? req.waitSeconds : s.waitSeconds;
  const pollMs = req.pollMs ?? 1_000;
  const progressMs = req.progressMs ?? 5_000;
  const started = Date.now();
  const deadline = wait === undefined ? started : wait === 0 ? Infinity : started + wait * 1000;
  let nextProgress = started;
  let warnedForever = false;
  let contended = 0;
  for (;;) {
    const got = await attempt(req, s, dir);
    if ('claim' in got) return got.claim;
    // a simultaneous claim for the same GPU: both withdrew; retry soon, at a random moment
    if ('contended' in got && ++contended <= MAX_CONTENDED_ROUNDS && !req.signal?.aborted) {
      await sleep(5 + Math.floor(Math.random() * 45), req.signal);
      continue;
    }
    const result = { shortage: 'shortage' in got ? got.shortage : got.contended };
    const now = Date.now();
    if (req.signal?.aborted) {
      throw new SflowError('GPU_WAIT_CANCELLED', `Waiting for GPUs for task '${req.task}' was cancelled`, {
        phase: 'run',
      });
    }
    if (now >= deadline) {
      const waited = wait ? ` after waiting ${Math.round((now - started) / 1000)} s` : '';
      throw new SflowError('GPU_UNAVAILABLE', `${result.shortage}${waited}`, {
        phase: 'run',
        hint:
          'wait with --wait-for-gpus <seconds> (0 = forever) or SFLOW_WAIT_FOR_GPUS; SFLOW_GPU_IGNORE_FOREIGN=1 ' +
          'ignores foreign workloads; SFLOW_GPU_BUSY_MEM_MIB (default 512) raises the busy threshold; ' +
          'SFLOW_GPU_RESERVATION=0 disables the reservation registry',
      });
    }
    if (now >= nextProgress) {
      const left = deadline === Infinity ? 'no time limit' : `${Math.ceil((deadline - now) / 1000)} s left`;
      req.onWait?.(`waiting for GPUs (${left}): ${result.shortage}`);
      nextProgress = now + progressMs;
    }
    if (deadline === Infinity && !warnedForever && now - started >= FOREVER_WARNING_MS) {
      warnedForever = true;
      req.onWait?.(
        `still waiting for GPUs for task '${req.task}' after 10 minutes; two runs that each hold part of the ` +
          'GPUs can wait for each other forever',
      );
    }
    await sleep(Math.min(pollMs, Math.max(1, deadline - now)), req.signal);
  }
}

/** only this process writes its own record file, so a state change needs no lock */
function rewrite(c: Claim, state: ReservationRecord['state']): Promise<boolean> {
  const mine = readRecord(c.file);
  if (!mine || mine.record.pid !== process.pid) return Promise.resolve(false);
  writeRecord(c.file, { ...mine.record, state });
  return Promise.resolve(true);
}

/**
 * `release_after: task_ready`: the task keeps running, but later tasks of the same run (same run id
 * and process) may claim its GPUs; every other run still sees them as taken.
 */
export async function lend(c: Claim): Promise<boolean> {
  try {
    return await rewrite(c, 'lent');
  } catch {
    return false; // still 'held': over-holding is the safe direction
  }
}

/**
 * Give the GPUs back; never throws, so it is safe in `finally`. With
 * `handover` the record stays, claimable by this run only, until a successor claims the GPUs or
 * `releaseRun` runs — for a successor the plan packed onto them.
 */
export async function release(c: Claim, opts: { handover?: boolean } = {}): Promise<void> {
  if (opts.handover) {
    try {
      if (await rewrite(c, 'handover')) return;
    } catch {
      // fall through to a plain release
    }
  }
  removeRecord(c.file);
}

/** Run-end backstop: remove every record this process wrote for `runId`. Returns how many. */
export async function releaseRun(runId: string, dir = registrySettings().dir): Promise<number> {
  const host = os.hostname();
  const mine = (s: StoredRecord) =>
    s.record.runId === runId && s.record.pid === process.pid && s.record.host === host;
  let n = 0;
  let stored: StoredRecord[];
  try {
    stored = listRecords(dir).stored;
  } catch {
    return 0;
  }
  for (const s of stored) if (mine(s) && removeRecord(s.file)) n++;
  return n;
}
