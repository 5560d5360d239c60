/**
 * On-disk records of the GPU reservation registry: one JSON file per claim in a machine-local
 * directory, written atomically (temp file + rename), and a registry-wide lock (proper-lockfile,
 * a lock directory whose mtime is refreshed while held, so a holder killed mid-section goes stale)
 * that is only ever waited for within a bound.
 */
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { SflowError } from '../config/errors.js';
import { errorCode } from '../util/errors.js';
import type { Keeper } from './keeper.js';

/** held: owned outright; lent: READY hand-back (this run may reuse, others may not); handover: owner exited, a successor of this run is expected */
export type RecordState = 'held' | 'lent' | 'handover';

export interface ReservationRecord {
  version: 1;
  runId: string;
  task: string;
  host: string;
  pid: number;
  /** /proc/<pid>/stat start time, guards against PID reuse; null where unknown */
  pidStartTime: number | null;
  uid: number | null;
  uuids: string[];
  /** nvidia-smi indices of the same GPUs, for messages */
  indices: number[];
  state: RecordState;
  createdAt: string;
  /** the driver's task launcher: the record stays while it lives (gpu/keeper.ts) */
  keeper?: Keeper;
}

export interface StoredRecord {
  file: string;
  record: ReservationRecord;
  /** owner of the file on disk */
  fileUid: number | null;
}

export const LOCK_TIMEOUT_MS = 10_000;
const LOCK_NAME = '.registry.lock';
const LOCK_STALE_MS = 5_000;

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  try {
    // shared by every user of the machine; sticky so users can only delete their own records
    chmodSync(dir, 0o1777);
  } catch {
    // not ours to change
  }
}

function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 80) || 'x';
}

export function recordFileName(r: Pick<ReservationRecord, 'runId' | 'task' | 'pid'>): string {
  return `${safe(r.runId)}.${safe(r.task)}.${r.pid}.${randomBytes(4).toString('hex')}.json`;
}

/** publish atomically: readers see the old record or the new one, never half of one */
export function writeRecord(file: string, record: ReservationRecord): void {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o644 });
  renameSync(tmp, file);
}

export function removeRecord(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

function isRecord(v: unknown): v is ReservationRecord {
  const r = v as ReservationRecord;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.runId === 'string' &&
    typeof r.pid === 'number' &&
    Array.isArray(r.uuids) &&
    typeof r.state === 'string'
  );
}

/** every readable record; unreadable files are returned with `record` null for the reaper */
export function listRecords(dir: string): {
  stored: StoredRecord[];
  corrupt: { file: string; fileUid: number | null }[];
} {
  const stored: StoredRecord[] = [];
  const corrupt: { file: string; fileUid: number | null }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { stored, corrupt };
  }
  for (const name of names.sort()) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    let fileUid: number | null = null;
    try {
      fileUid = statSync(file).uid;
      const record: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (isRecord(record)) stored.push({ file, record, fileUid });
      else corrupt.push({ file, fileUid });
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') corrupt.push({ file, fileUid });
    }
  }
  return { stored, corrupt };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** run `fn` holding the registry lock; waits at most `timeoutMs` for it, then throws */
export async function withRegistryLock<T>(
  dir: string,
  fn: () => T | Promise<T>,
  timeoutMs = LOCK_TIMEOUT_MS,
): Promise<T> {
  ensureDir(dir);
  const lockPath = path.join(dir, LOCK_NAME);
  const deadline = Date.now() + timeoutMs;
  let release: (() => Promise<void>) | undefined;
  for (;;) {
    try {
      release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        realpath: false,
        stale: LOCK_STALE_MS,
        retries: 0,
        onCompromised: () => {
          // the section is milliseconds long; a lock lost to staleness only costs exclusivity once
        },
      });
      break;
    } catch (e) {
      if (errorCode(e) !== 'ELOCKED') throw e;
      if (Date.now() >= deadline) {
        throw new SflowError(
          'GPU_REGISTRY_LOCKED',
          `GPU reservation registry lock ${lockPath} stayed busy for ${Math.round(timeoutMs / 1000)} s`,
          {
            phase: 'run',
            hint: 'another sflow process may be stuck, or the registry directory is on a slow filesystem',
          },
        );
      }
      await sleep(15 + Math.floor(Math.random() * 20));
    }
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
  }
}
