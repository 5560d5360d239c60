/**
 * On-disk records of the GPU reservation registry: one JSON file per claim in a machine-local
 * directory (checked by registry-dir.ts), published atomically (a fresh temp file, then a rename).
 * Reading treats every entry as possibly hostile: no symbolic links or FIFOs are followed or
 * opened, files and the directory listing are size-capped, and each record is validated field by
 * field and returned with the uid that owns its file.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { errorCode } from '../util/errors.js';
import { isKeeper, type Keeper } from './keeper.js';
import { escapeControls } from '../util/ansi.js';

/**
 * claiming: written before the claim is decided (see registry.ts); held: owned outright;
 * lent: READY hand-back (this run may reuse, others may not); handover: owner exited, a successor of
 * this run is expected
 */
export type RecordState = 'claiming' | 'held' | 'lent' | 'handover';
const STATES: readonly string[] = ['claiming', 'held', 'lent', 'handover'];

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

/** a record file larger than this is not one sflow wrote */
const MAX_RECORD_BYTES = 64 * 1024;
/** more entries than this: the directory is being flooded */
export const MAX_ENTRIES = 10_000;

function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 80) || 'x';
}

export function recordFileName(r: Pick<ReservationRecord, 'runId' | 'task' | 'pid'>): string {
  return `${safe(r.runId)}.${safe(r.task)}.${r.pid}.${randomBytes(6).toString('hex')}.json`;
}

/**
 * Publish atomically: readers see the old record or the new one, never half of one. The temp file
 * is created exclusively (a name planted in advance is never followed), then renamed over `file`.
 */
export function writeRecord(file: string, record: ReservationRecord): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o644, flag: 'wx' });
    renameSync(tmp, file);
  } catch (e) {
    removeRecord(tmp);
    throw new SflowError(
      'GPU_REGISTRY_WRITE',
      `cannot write GPU reservation record ${file}: ${errorCode(e) ?? String(e)}`,
      { phase: 'run', hint: 'check that the registry directory is writable and the disk is not full' },
    );
  }
}

export function removeRecord(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isStr = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length <= max;

function isRecord(v: unknown): v is ReservationRecord {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return (
    r.version === 1 &&
    isStr(r.runId) &&
    isStr(r.task) &&
    isStr(r.host) &&
    isInt(r.pid) &&
    r.pid > 0 &&
    (r.pidStartTime === null || isInt(r.pidStartTime)) &&
    (r.uid === null || isInt(r.uid)) &&
    Array.isArray(r.uuids) &&
    r.uuids.length <= 1024 &&
    r.uuids.every((u) => isStr(u, 256)) &&
    Array.isArray(r.indices) &&
    r.indices.length === r.uuids.length &&
    r.indices.every(isInt) &&
    isStr(r.state) &&
    STATES.includes(r.state) &&
    isStr(r.createdAt, 64) &&
    (r.keeper === undefined || isKeeper(r.keeper))
  );
}

/**
 * A record's strings as text a terminal shows as such: another user may write any bytes into a
 * shared registry, and run and task names end up in messages (`reserved by run '…' task '…'`).
 */
function asText(r: ReservationRecord): ReservationRecord {
  return {
    ...r,
    runId: escapeControls(r.runId),
    task: escapeControls(r.task),
    host: escapeControls(r.host),
    createdAt: escapeControls(r.createdAt),
    uuids: r.uuids.map(escapeControls),
  };
}

/** a regular file's text, or null (not regular, too large, vanished); never follows a link or blocks */
function readRegular(file: string): { text: string; uid: number } | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_RECORD_BYTES) return { text: '', uid: st.uid };
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, st.size, 0);
    return { text: buf.toString('utf8', 0, n), uid: st.uid };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** entry names of the registry directory; throws when it is flooded */
export function registryEntries(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  if (names.length > MAX_ENTRIES) {
    throw new SflowError(
      'GPU_REGISTRY_FLOODED',
      `GPU reservation registry ${dir} holds ${names.length} entries (more than ${MAX_ENTRIES})`,
      { phase: 'run', hint: 'remove what does not belong there, or use another SFLOW_GPU_RESERVATION_DIR' },
    );
  }
  return names.sort();
}

/** every valid record; anything else that looks like one is returned as `corrupt` for the reaper */
export function listRecords(dir: string): {
  stored: StoredRecord[];
  corrupt: { file: string; fileUid: number | null }[];
} {
  const stored: StoredRecord[] = [];
  const corrupt: { file: string; fileUid: number | null }[] = [];
  for (const name of registryEntries(dir)) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    const got = readRegular(file);
    if (got === null) continue;
    let record: unknown;
    try {
      record = JSON.parse(got.text);
    } catch {
      record = undefined;
    }
    if (isRecord(record)) stored.push({ file, record: asText(record), fileUid: got.uid });
    else corrupt.push({ file, fileUid: got.uid });
  }
  return { stored, corrupt };
}

/** one record by file name, if it is still there and valid */
export function readRecord(file: string): StoredRecord | null {
  const got = readRegular(file);
  if (got === null) return null;
  try {
    const record: unknown = JSON.parse(got.text);
    return isRecord(record) ? { file, record: asText(record), fileUid: got.uid } : null;
  } catch {
    return null;
  }
}
