/**
 * The index of this user's runs in progress on this machine: one small JSON file per run naming
 * its run directory and its driver (pid, /proc start time, boot id). A session registers itself
 * before any task starts and removes its entry when it ends, on every path it controls; an entry
 * whose driver is gone is a run that lost its driver (SIGKILL, a crash, a power cut), which the next
 * `sflow run` and `sflow recover` find here without scanning any output folder.
 *
 * Where: `SFLOW_RUN_INDEX_DIR`, else `$XDG_RUNTIME_DIR/sflow/runs` (per user, per boot), else
 * `<tmp>/sflow-runs-<uid>`. The folder must be a real folder owned by this user and closed to
 * others (0700); anything else is refused, never repaired (the GPU registry's rule).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, processStartTime } from '../util/process-liveness.js';
import { errorCode, errorMessage } from '../util/errors.js';

export interface LiveRunEntry {
  v: 1;
  runId: string;
  workflow: string;
  runDir: string;
  pid: number;
  /** /proc start time of the driver (PID-reuse guard); null off Linux */
  startTime: number | null;
  host: string;
  /** /proc/sys/kernel/random/boot_id: after a reboot nothing of the run can still run */
  bootId: string | null;
  startedAt: string;
}

export interface IndexedRun {
  file: string;
  entry: LiveRunEntry;
}

const MAX_ENTRY_BYTES = 16 * 1024;
const MAX_ENTRIES = 10_000;

export function liveRunsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SFLOW_RUN_INDEX_DIR) return env.SFLOW_RUN_INDEX_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'sflow', 'runs');
  return join(tmpdir(), `sflow-runs-${process.getuid?.() ?? 'user'}`);
}

let bootIdCache: string | null | undefined;
export function bootId(): string | null {
  if (bootIdCache === undefined) {
    try {
      bootIdCache = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      bootIdCache = null;
    }
  }
  return bootIdCache;
}

/** The index folder, created 0700 when missing; throws a sentence when it cannot be trusted. */
export function openIndexDir(env: NodeJS.ProcessEnv = process.env, create = true): string | null {
  const dir = liveRunsDir(env);
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    if (errorCode(e) !== 'ENOENT') throw new Error(`run index ${dir}: ${errorMessage(e)}`, { cause: e });
    if (!create) return null;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    st = lstatSync(dir);
  }
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`run index ${dir} is not a folder (a link?)`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`run index ${dir} belongs to another user (uid ${st.uid})`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(
      `run index ${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}); expected 0700`,
    );
  return dir;
}

/** Registers a run; the returned function removes the entry (idempotent, never throws). */
export function registerLiveRun(
  run: { runId: string; workflow: string; runDir: string },
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  const dir = openIndexDir(env);
  if (!dir) return () => undefined;
  const entry: LiveRunEntry = {
    v: 1,
    runId: run.runId,
    workflow: run.workflow,
    runDir: run.runDir,
    pid: process.pid,
    startTime: processStartTime(process.pid),
    host: hostname(),
    bootId: bootId(),
    startedAt: new Date().toISOString(),
  };
  const file = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(entry) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    forgetLiveRun(file);
  };
}

export function forgetLiveRun(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone (another recoverer)
  }
}

function readEntry(file: string): LiveRunEntry | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_ENTRY_BYTES) return null;
    const buf = Buffer.alloc(st.size);
    const v = JSON.parse(buf.toString('utf8', 0, readSync(fd, buf, 0, st.size, 0))) as Partial<LiveRunEntry>;
    const ok =
      v.v === 1 &&
      typeof v.runDir === 'string' &&
      typeof v.runId === 'string' &&
      Number.isSafeInteger(v.pid) &&
      typeof v.host === 'string';
    return ok ? (v as LiveRunEntry) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Every entry of the index (unreadable ones skipped). */
export function listLiveRuns(env: NodeJS.ProcessEnv = process.env): IndexedRun[] {
  const dir = openIndexDir(env, false);
  if (!dir) return [];
  const names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  if (names.length > MAX_ENTRIES) throw new Error(`run index ${dir} holds ${names.length} entries`);
  const out: IndexedRun[] = [];
  for (const n of names.sort()) {
    const entry = readEntry(join(dir, n));
    if (entry) out.push({ file: join(dir, n), entry });
  }
  return out;
}

/** The entry's driver is gone (this machine only: another host's pid means nothing here). */
export function driverLost(e: LiveRunEntry): boolean {
  if (e.host !== hostname()) return false;
  const boot = bootId();
  if (e.bootId && boot && e.bootId !== boot) return true;
  return !isProcessAlive(e.pid, e.startTime ?? null);
}

/** Runs of this machine whose driver is gone. */
export function lostRuns(env: NodeJS.ProcessEnv = process.env): IndexedRun[] {
  return listLiveRuns(env).filter((r) => driverLost(r.entry));
}
