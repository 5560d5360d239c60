/**
 * One driver per run folder: `sflow run` (a new folder), `sflow run --resume` and `sflow recover`
 * hold `<run dir>/.sflow.lock` while they touch the folder, so two of them never drive one run at
 * once (two resumes would run the remaining tasks twice and append two endings to the ledger).
 *
 * The lock file names its holder: the driver identity of backends/driver-identity.ts
 * (`<host>:<pid>:<start time>`), the command and since when. It is made complete in a temporary
 * file and linked into place (link() fails when the name exists, so a reader never sees half a
 * lock). A lock whose holder is provably gone (this host, pid dead or reused: a SIGKILLed driver)
 * is stale and taken over; anything else — a live holder, another host's, an unreadable lock —
 * is refused, naming the holder. Released when the holder is done and, as a backstop, when its
 * process exits on any path it controls; within one process the lock is re-entrant.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { driverGone, driverId, parseDriverId } from '../backends/driver-identity.js';
import { SflowError } from '../util/sflow-error.js';
import { errorCode, errorMessage } from '../util/errors.js';

export const RUN_LOCK = '.sflow.lock';

export interface LockHolder {
  v: 1;
  /** `<host>:<pid>:<start time>` */
  driver: string;
  /** what holds it: `sflow run`, `sflow run --resume`, `sflow recover` */
  command: string;
  /** ISO time it was taken */
  since: string;
  /** tells this holder's lock from a later one of the same identity */
  nonce: string;
}

export interface RunLock {
  readonly path: string;
  /**
   * set when no lock could be made (the folder is not writable, a full disk): the caller goes on
   * without one and says so; whatever it writes there fails and is reported the same way
   */
  readonly unavailable?: string;
  /** removes the lock if it is still this holder's (idempotent, never throws) */
  release(): void;
}

/** Held locks of this process: run dir → [lock, holds] (re-entrant) */
const held = new Map<string, { lock: RunLock; holds: number }>();
let exitHook = false;

const MAX_LOCK_BYTES = 4096;

/** the lock's text, or undefined when there is none (ENOENT); never follows a link */
function readLockText(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return undefined;
    return `unreadable: ${errorMessage(e)}`;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_LOCK_BYTES) return 'unreadable: not a small file';
    const buf = Buffer.alloc(st.size);
    return buf.toString('utf8', 0, readSync(fd, buf, 0, st.size, 0));
  } finally {
    closeSync(fd);
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (h.v === 1 && typeof h.driver === 'string' && typeof h.nonce === 'string')
      return {
        v: 1,
        driver: h.driver,
        command: String(h.command ?? 'sflow'),
        since: String(h.since ?? '?'),
        nonce: h.nonce,
      };
  } catch {
    // not JSON: not a lock sflow wrote
  }
  return undefined;
}

/** `pid 123 on host (sflow run --resume, since …)` */
export function describeHolder(h: LockHolder): string {
  const d = parseDriverId(h.driver);
  const who = d ? `pid ${d.pid} on ${d.host}` : `driver ${h.driver}`;
  return `${who} (${h.command}, since ${h.since})`;
}

/**
 * Moves a stale lock aside and removes it, unless the file there is no longer the stale one that
 * was read (another driver took over meanwhile): then it is put back.
 */
function takeOver(path: string, stale: string, nonce: string): void {
  const aside = `${path}.stale-${process.pid}-${nonce}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return; // someone removed it first
    throw e;
  }
  if (readLockText(aside) !== stale) {
    try {
      linkSync(aside, path);
    } catch {
      // a third driver made one meanwhile: it keeps it
    }
  }
  unlinkSync(aside);
}

/** Links a complete lock file into place; false when a lock exists. */
function place(path: string, text: string, nonce: string): boolean {
  const tmp = `${path}.${process.pid}-${nonce}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644, flag: 'wx' });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if (errorCode(e) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(e) ?? '')) throw e;
    // a file system without hard links: exclusive create (a reader may see it half-written)
    try {
      writeFileSync(path, text, { mode: 0o644, flag: 'wx' });
      return true;
    } catch (e2) {
      if (errorCode(e2) === 'EEXIST') return false;
      throw e2;
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

function refusal(runDir: string, what: string, holder: string, hint: string): SflowError {
  return new SflowError(
    'run.folder_locked',
    `${what} ${runDir}: another sflow drives this run folder: ${holder}`,
    {
      phase: 'preflight',
      hint,
    },
  );
}

/**
 * Takes the run folder's lock for `command`, or throws a refusal naming its holder (`what`
 * starts it: `cannot resume`, `cannot recover`). Where no lock file can be made at all the lock
 * says why (`unavailable`) and holds nothing.
 */
export function lockRunDir(runDir: string, command: string, what = 'cannot use'): RunLock {
  const mine = held.get(runDir);
  if (mine) {
    mine.holds++;
    return hold(runDir, mine.lock.path);
  }
  const path = join(runDir, RUN_LOCK);
  const nonce = randomBytes(8).toString('hex');
  const holder: LockHolder = { v: 1, driver: driverId(), command, since: new Date().toISOString(), nonce };
  const text = JSON.stringify(holder) + '\n';
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if (place(path, text, nonce)) return keep(runDir, path, nonce);
    } catch (e) {
      return {
        path,
        unavailable: `${path} could not be made (${errorMessage(e)})`,
        release: () => undefined,
      };
    }
    const seen = readLockText(path);
    if (seen === undefined) continue; // released meanwhile
    const other = parseHolder(seen);
    if (!other)
      throw refusal(
        runDir,
        what,
        `${path} is not a lock sflow can read`,
        `if no sflow uses this folder, remove ${path} and try again`,
      );
    if (!driverGone(other.driver)) {
      const d = parseDriverId(other.driver);
      throw refusal(
        runDir,
        what,
        describeHolder(other),
        d && d.host !== parseDriverId(holder.driver)?.host
          ? `it runs on another machine; once it is gone there, remove ${path}`
          : `wait for it to end, or stop it (kill -TERM ${d?.pid ?? '<pid>'}) and try again`,
      );
    }
    takeOver(path, seen, nonce); // its driver is gone (a SIGKILL): the lock is stale
  }
  throw refusal(runDir, what, `its lock ${path} keeps changing hands`, 'try again in a moment');
}

function keep(runDir: string, path: string, nonce: string): RunLock {
  const lock: RunLock = {
    path,
    release: () => {
      const text = readLockText(path);
      if (text !== undefined && parseHolder(text)?.nonce === nonce) {
        try {
          unlinkSync(path);
        } catch {
          // gone meanwhile
        }
      }
    },
  };
  held.set(runDir, { lock, holds: 1 });
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const h of held.values()) h.lock.release();
      held.clear();
    });
  }
  return hold(runDir, path);
}

/** one hold of a lock this process has: its release counts once */
function hold(runDir: string, path: string): RunLock {
  let done = false;
  return {
    path,
    release: () => {
      if (done) return;
      done = true;
      const h = held.get(runDir);
      if (!h || --h.holds > 0) return;
      held.delete(runDir);
      h.lock.release();
    },
  };
}
