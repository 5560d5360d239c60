/**
 * Cross-process GPU reservation registry (backends.md §3.7): concurrent sflow runs — and concurrent
 * tasks of one run — on one machine claim disjoint physical GPUs, keyed by nvidia-smi UUID. Serves
 * the Docker backend (single local host) and the local backend.
 *
 * A claim reads the inventory (nvidia-smi, outside the lock), then under the registry lock reaps
 * records of dead owners, picks free GPUs disjoint from every live record and not busy with a
 * foreign workload, and writes its own record. Waiting (`waitSeconds`) retries that on a short poll.
 */
import os from 'node:os';
import path from 'node:path';
import { SflowError } from '../config/errors.js';
import {
  queryComputeApps,
  queryGpus,
  type GpuInfo,
  type GpuProcess,
  type NvidiaSmiOptions,
} from './nvidia-smi.js';
import { ownerAlive, type Keeper } from './keeper.js';
import { processStartTime } from './procfs.js';
import {
  ensureDir,
  listRecords,
  recordFileName,
  removeRecord,
  withRegistryLock,
  writeRecord,
  type ReservationRecord,
  type StoredRecord,
} from './records.js';
import { registrySettings, type RegistrySettings } from './settings.js';
import { describeShortage, pickGpus, type Inventory } from './select.js';

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
}

const FOREVER_WARNING_MS = 10 * 60_000;
const uid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

function settingsOf(over?: Partial<RegistrySettings>): RegistrySettings {
  return { ...registrySettings(), ...over };
}

/** remove records whose owner died (or whose PID was reused); never another user's or host's */
function reapInside(dir: string): { live: StoredRecord[]; reaped: ReservationRecord[] } {
  const me = uid();
  const host = os.hostname();
  const { stored, corrupt } = listRecords(dir);
  const live: StoredRecord[] = [];
  const reaped: ReservationRecord[] = [];
  for (const s of stored) {
    const owner = s.record.uid ?? s.fileUid;
    const foreignOwner = me !== null && owner !== null && owner !== me;
    if (s.record.host !== host || foreignOwner || ownerAlive(s.record)) {
      live.push(s);
    } else if (removeRecord(s.file)) {
      reaped.push(s.record);
    }
  }
  for (const c of corrupt) if (me === null || c.fileUid === me) removeRecord(c.file);
  return { live, reaped };
}

/** Reap records of dead owners now (a claim does this too). Returns the removed records. */
export async function reapDead(dir = registrySettings().dir): Promise<ReservationRecord[]> {
  return withRegistryLock(dir, () => reapInside(dir).reaped);
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

type Attempt = { claim: Claim } | { shortage: string };

async function attempt(req: ClaimRequest, s: RegistrySettings): Promise<Attempt> {
  const inv = await inventory(req);
  return withRegistryLock(s.dir, () => {
    const { live, reaped } = reapInside(s.dir);
    const self = { runId: req.runId, host: os.hostname(), pid: process.pid };
    const picked = pickGpus(req.want, req.prefer ?? [], inv, live, self, s, req.task);
    if (!picked.ok) return { shortage: describeShortage(req, inv, live, picked, s) };
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
      state: 'held',
      createdAt: new Date().toISOString(),
      ...(req.keeper ? { keeper: req.keeper } : {}),
    };
    const file = path.join(s.dir, recordFileName(record));
    writeRecord(file, record);
    // GPUs taken over from this run's own hand-over records leave those records
    const taken = new Set(record.uuids);
    for (const h of live) {
      const r = h.record;
      if (r.state !== 'handover' || r.runId !== self.runId || r.pid !== self.pid || r.host !== self.host)
        continue;
      const keep = r.uuids.filter((u) => !taken.has(u));
      if (keep.length === r.uuids.length) continue;
      if (keep.length === 0) removeRecord(h.file);
      else
        writeRecord(h.file, {
          ...r,
          uuids: keep,
          indices: r.indices.filter((_, i) => !taken.has(r.uuids[i])),
        });
    }
    return {
      claim: {
        runId: req.runId,
        task: req.task,
        dir: s.dir,
        file,
        uuids: record.uuids,
        indices: record.indices,
        reaped,
      },
    };
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Claim GPUs for one task. Fails fast with an SflowError naming which GPUs are held by which
 * run/task/pid (or busy with foreign work) unless waiting is on; every wait ends at its deadline.
 */
export async function claim(req: ClaimRequest): Promise<Claim> {
  const s = settingsOf(req.settings);
  ensureDir(s.dir);
  const wait = req.waitSeconds !== undefined ? req.waitSeconds : s.waitSeconds;
  const pollMs = req.pollMs ?? 1_000;
  const progressMs = req.progressMs ?? 5_000;
  const started = Date.now();
  const deadline = wait === undefined ? started : wait === 0 ? Infinity : started + wait * 1000;
  let nextProgress = started;
  let warnedForever = false;
  for (;;) {
    let result: Attempt;
    try {
      result = await attempt(req, s);
    } catch (e) {
      // a busy lock is transient while waiting; anything else (bad request, nvidia-smi) is not
      if (!(e instanceof SflowError && e.code === 'GPU_REGISTRY_LOCKED') || Date.now() >= deadline) throw e;
      result = { shortage: e.message };
    }
    if ('claim' in result) return result.claim;
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

async function rewrite(c: Claim, state: ReservationRecord['state']): Promise<boolean> {
  return withRegistryLock(c.dir, () => {
    const mine = listRecords(c.dir).stored.find((s) => s.file === c.file);
    if (!mine) return false;
    writeRecord(c.file, { ...mine.record, state });
    return true;
  });
}

/**
 * `release_after: task_ready`: the task keeps running, but later tasks of the same run (same run id
 * and process) may claim its GPUs; every other run still sees them as taken. Bounded (≤ 10 s).
 */
export async function lend(c: Claim): Promise<boolean> {
  try {
    return await rewrite(c, 'lent');
  } catch {
    return false; // still 'held': over-holding is the safe direction
  }
}

/**
 * Give the GPUs back; bounded (≤ 10 s) and never throws, so it is safe in `finally`. With
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
  for (const s of listRecords(dir).stored) if (mine(s) && removeRecord(s.file)) n++;
  return n;
}
