/**
 * Which records of the registry count. Another user of the machine can write files into a shared
 * (sticky) registry directory, so a record is believed only as far as it can be checked:
 *
 * - its `uid` must be the uid that owns its file (nobody can write a record in someone else's name);
 * - a record of another host is honoured only in a file of our own uid (the registry is per
 *   machine; we cannot check another host's processes);
 * - its pid must be alive and, where the start time was recorded, be the same process (PID-reuse
 *   guard); a dead owner's record is reaped whoever wrote it (removed where the directory lets us,
 *   ignored otherwise);
 * - the live pid must belong to the record's uid (a record cannot borrow someone else's process);
 * - a record naming a keeper (the driver's task launcher) stays while the keeper lives after its
 *   driver died, under the same checks (keeper.ts).
 */
import { lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { liveHolder } from './keeper.js';
import { processUids } from '../util/process-liveness.js';
import {
  listRecords,
  registryEntries,
  removeRecord,
  type ReservationRecord,
  type StoredRecord,
} from './records.js';

export interface Ignored {
  file: string;
  why: string;
}

export interface Census {
  /** records that hold GPUs */
  live: StoredRecord[];
  /** records of dead owners, removed */
  reaped: ReservationRecord[];
  /** records that cannot be believed, and why */
  ignored: Ignored[];
}

const myUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

/** leftovers of an interrupted write older than this are removed (our own only) */
const STALE_TMP_MS = 60_000;

type Verdict = { kind: 'live' } | { kind: 'dead' } | { kind: 'untrusted'; why: string };

export function judge(s: StoredRecord, me = myUid(), host = os.hostname()): Verdict {
  const r = s.record;
  const mine = me === null || s.fileUid === me;
  if (s.fileUid !== null && r.uid !== s.fileUid) {
    return {
      kind: 'untrusted',
      why: `it names uid ${String(r.uid)} but its file belongs to uid ${s.fileUid}`,
    };
  }
  if (r.host !== host)
    return mine ? { kind: 'live' } : { kind: 'untrusted', why: `it names another host (${r.host})` };
  // the driver, or once it is gone its task launcher until every task group is stopped (keeper.ts)
  const holder = liveHolder(r);
  if (holder === undefined) return { kind: 'dead' };
  const uids = processUids(holder);
  if (uids !== null && r.uid !== null && !uids.includes(r.uid)) {
    return {
      kind: 'untrusted',
      why: `its ${holder === r.pid ? 'pid' : 'keeper pid'} ${holder} belongs to uid ${uids[1]}, not to the record's uid ${r.uid}`,
    };
  }
  return { kind: 'live' };
}

function removeStaleTemps(dir: string, me: number | null): void {
  const now = Date.now();
  for (const name of registryEntries(dir)) {
    if (!name.endsWith('.tmp')) continue;
    const file = path.join(dir, name);
    try {
      const st = lstatSync(file);
      if (st.isFile() && (me === null || st.uid === me) && now - st.mtimeMs > STALE_TMP_MS)
        removeRecord(file);
    } catch {
      // gone meanwhile
    }
  }
}

/** Read the registry: which records hold GPUs; reap dead owners; set aside what cannot be believed. */
export function census(dir: string): Census {
  const me = myUid();
  const host = os.hostname();
  const { stored, corrupt } = listRecords(dir);
  const out: Census = { live: [], reaped: [], ignored: [] };
  for (const s of stored) {
    const v = judge(s, me, host);
    if (v.kind === 'live') out.live.push(s);
    else if (v.kind === 'dead') {
      // in a sticky directory another user's file cannot be removed: it is ignored instead
      if (removeRecord(s.file)) out.reaped.push(s.record);
      else out.ignored.push({ file: s.file, why: `its process ${s.record.pid} is gone` });
    } else out.ignored.push({ file: s.file, why: v.why });
  }
  for (const c of corrupt) {
    if (me === null || c.fileUid === me) removeRecord(c.file);
    else out.ignored.push({ file: c.file, why: 'it is not a valid reservation record' });
  }
  removeStaleTemps(dir, me);
  return out;
}
