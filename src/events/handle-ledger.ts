/**
 * The handle ledger of a run: `<run dir>/handles.jsonl`, one JSON line per change of an attempt's
 * handle (`launched` as soon as the engine accepted it, `updated` when remote ids arrive,
 * `ended` once nothing of it runs). Written synchronously, so a driver killed at any moment leaves
 * a ledger from which a later process (`sflow` recovering a run, issue 9's lifeline) finds what
 * may still run: the latest record of every attempt not marked `ended`. Lines of version 1 (the
 * previous sflow, engine ids as strings) are read too: their ids move into a `V1EngineState` that
 * only the backend kind's legacy parse reads.
 */
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { handleKey, HANDLE_VERSION, type TaskHandle, type V1EngineState } from './handle.js';
import { appendWholeLine } from '../util/whole-line.js';

export const HANDLE_LEDGER = 'handles.jsonl';

export type LedgerOp = 'launched' | 'updated' | 'ended';

export interface LedgerLine {
  v: typeof HANDLE_VERSION;
  /** ms epoch */
  t: number;
  op: LedgerOp;
  handle: TaskHandle;
}

export function ledgerPath(runDir: string): string {
  return join(runDir, HANDLE_LEDGER);
}

export class HandleLedger {
  private fd: number | undefined;
  private readonly last = new Map<string, string>();

  constructor(readonly path: string) {}

  /** Appends a record unless it repeats the attempt's last one. Never throws (returns the error). */
  write(op: LedgerOp, handle: TaskHandle): Error | undefined {
    const key = handleKey(handle);
    const body = JSON.stringify(handle);
    if (op !== 'ended' && this.last.get(key) === body) return undefined;
    this.last.set(key, body);
    const line: LedgerLine = { v: HANDLE_VERSION, t: Date.now(), op, handle };
    try {
      this.fd ??= openSync(this.path, 'a');
      appendWholeLine(this.fd, JSON.stringify(line));
      return undefined;
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

export interface LedgerState {
  /** latest handle of every attempt that was never marked ended, in first-launch order */
  open: TaskHandle[];
  /** every attempt's latest handle */
  all: TaskHandle[];
  /** lines that could not be read (a driver killed mid-write leaves at most the last one torn) */
  skipped: number;
}

/** the version-1 handle: no engine state, the engine ids squeezed into `remoteIds` */
type TaskHandleV1 = Omit<TaskHandle, 'v' | 'engine'> & { v: 1 };

/** A version-1 handle as a current one: its ids kept, as they were, for its kind's legacy parse. */
export function fromV1Handle(h: TaskHandleV1): TaskHandle {
  const ids = Array.isArray(h.remoteIds) ? h.remoteIds.map(String) : [];
  const engine: V1EngineState = { kind: h.type, v1RemoteIds: ids };
  return { ...h, v: HANDLE_VERSION, engine, remoteIds: ids };
}

type AnyLine = (LedgerLine | (Omit<LedgerLine, 'v' | 'handle'> & { v: 1; handle: TaskHandleV1 })) | null;

/** a line's handle in the current version, or undefined for a version this sflow does not read */
function handleOf(line: AnyLine): TaskHandle | undefined {
  if (line?.v === 1 && line.handle?.v === 1) return fromV1Handle(line.handle);
  if (line?.v === HANDLE_VERSION && line.handle?.v === HANDLE_VERSION) return line.handle;
  return undefined;
}

/**
 * Reads a ledger (missing file: empty). Version-1 lines are upgraded (`fromV1Handle`); unknown
 * versions are skipped, not guessed at. The engine states are not checked here: the backend kind
 * parses a handle's state when it acts on it (`recover`), and refuses one it cannot read.
 */
export function readHandleLedger(path: string): LedgerState {
  if (!existsSync(path)) return { open: [], all: [], skipped: 0 };
  const latest = new Map<string, TaskHandle>();
  const ended = new Set<string>();
  let skipped = 0;
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (!text.trim()) continue;
    let line: AnyLine;
    try {
      line = JSON.parse(text) as AnyLine;
    } catch {
      skipped++;
      continue;
    }
    const handle = handleOf(line);
    if (!line || !handle) {
      skipped++;
      continue;
    }
    const key = handleKey(handle);
    latest.set(key, handle);
    if (line.op === 'ended') ended.add(key);
  }
  const all = [...latest.values()];
  return { open: all.filter((h) => !ended.has(handleKey(h))), all, skipped };
}
