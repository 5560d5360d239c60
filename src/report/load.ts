/**
 * A run directory → the report's inputs: `events.jsonl` (the ledger; a torn last line from a
 * killed driver is skipped), `results.json` for values the ledger lacks, units from the tasks'
 * `result.json` metadata, the last lines of each failed task's log and the monitor samples.
 * `writeRunReport` writes `<run dir>/report.html`.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  fstatSync,
  rmSync,
  writeSync,
  renameSync,
  realpathSync,
} from 'node:fs';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { RunEvent } from '../events/events.js';
import { stripAnsi } from '../util/ansi.js';
import { buildModel, type ReportModel } from './model.js';
import { monitorCharts } from './monitor.js';
import { renderReportParts, type ReportInput } from './page.js';

export const REPORT_FILE = 'report.html';
const TAIL_LINES = 40;
const TAIL_BYTES = 32 * 1024;
const MAX_TAILS = 50;

export class NotARunDirError extends Error {}

/**
 * A ledger parsed a piece at a time: each complete line is parsed as it arrives, a line that is
 * not JSON (a torn write) is skipped and counted. Reading a ledger this way holds only one piece of
 * its text at a time: a 10,000-task run's 10 MB ledger read whole (then joined into one JSON array)
 * held four copies of its text beside the parsed events (bench/scale-local.mjs, docs/scale.md).
 */
class LedgerLines {
  readonly events: RunEvent[] = [];
  skipped = 0;
  private rest = '';

  push(piece: string): void {
    const text = this.rest + piece;
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      this.line(text, start, end);
      start = end + 1;
    }
    this.rest = text.slice(start);
  }

  end(): { events: RunEvent[]; skipped: number } {
    this.line(this.rest, 0, this.rest.length);
    this.rest = '';
    return { events: this.events, skipped: this.skipped };
  }

  private line(text: string, start: number, end: number): void {
    if (end <= start) return;
    try {
      this.events.push(JSON.parse(text.slice(start, end)) as RunEvent);
    } catch {
      this.skipped++;
    }
  }
}

/** Parses a ledger; lines that are not JSON (a torn write) are skipped and counted. */
export function parseLedger(text: string): { events: RunEvent[]; skipped: number } {
  const lines = new LedgerLines();
  lines.push(text);
  return lines.end();
}

/** the piece of a ledger read at a time */
const LEDGER_PIECE = 1 << 20;

export function readLedger(runDir: string): RunEvent[] {
  const path = join(runDir, 'events.jsonl');
  if (!existsSync(path))
    throw new NotARunDirError(`${runDir}: no events.jsonl (not an sflow run directory?)`);
  const fd = openSync(path, 'r');
  try {
    const lines = new LedgerLines();
    const decoder = new StringDecoder('utf8'); // a character split between two pieces stays whole
    const buf = Buffer.alloc(LEDGER_PIECE);
    for (
      let n = readSync(fd, buf, 0, LEDGER_PIECE, null);
      n > 0;
      n = readSync(fd, buf, 0, LEDGER_PIECE, null)
    )
      lines.push(decoder.write(buf.subarray(0, n)));
    lines.push(decoder.end());
    return lines.end().events;
  } finally {
    closeSync(fd);
  }
}

/** The last `lines` lines of a file, reading at most TAIL_BYTES from its end. */
export function tailLines(path: string, lines = TAIL_LINES): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    let text = stripAnsi(buf.toString('utf8'));
    if (len < size) text = text.slice(text.indexOf('\n') + 1); // drop the partial first line
    const all = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
    return all.slice(-lines).map((l) => (l.length > 500 ? `${l.slice(0, 500)}…` : l));
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * `path` when it is a file inside the run folder once links are followed, else undefined: the
 * report reads only the run's own files — a ledger a task edited may name any path (`../..`, a
 * link to /etc), and a task may leave a link in its own folder.
 */
export function insideRun(runDir: string, path: string): string | undefined {
  try {
    const root = realpathSync(runDir);
    const real = realpathSync(path);
    return real.startsWith(root + sep) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** A path recorded by the run, or the same file under `runDir` when the run directory moved. */
function located(
  recorded: string | undefined,
  runDir: string,
  recordedRunDir: string,
  fallback: string,
): string {
  if (recorded && existsSync(recorded)) return recorded;
  if (recorded && recordedRunDir && recorded.startsWith(recordedRunDir))
    return join(runDir, recorded.slice(recordedRunDir.length));
  return join(runDir, fallback);
}

function fillFromResultsJson(m: ReportModel, runDir: string): void {
  const path = join(runDir, 'results.json');
  if (!existsSync(path)) return;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as {
      tasks?: Record<string, { ok?: boolean; values?: Record<string, unknown>; result_file?: string }>;
    };
    const byName = new Map(m.tasks.map((t) => [t.name, t]));
    for (const [name, e] of Object.entries(doc.tasks ?? {})) {
      const t = byName.get(name);
      if (!t || t.result) continue;
      t.result = {
        ok: e.ok !== false,
        values: e.values ?? {},
        errors: [],
        resultPath: e.result_file ? resolve(runDir, e.result_file) : undefined,
        assertions: [],
      };
    }
  } catch {
    /* a broken results.json: the ledger's values stand */
  }
}

function unitsByBase(m: ReportModel, runDir: string): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const t of m.tasks) {
    const base = t.info?.base ?? t.name;
    if (!t.result || out.has(base)) continue;
    const path = insideRun(
      runDir,
      located(t.result.resultPath, runDir, m.runDir, join(t.name, 'result.json')),
    );
    const units: Record<string, string> = {};
    try {
      if (!path) throw new Error('not a file of the run');
      const md =
        (JSON.parse(readFileSync(path, 'utf8')) as { metadata?: Record<string, { unit?: string | null }> })
          .metadata ?? {};
      for (const [k, v] of Object.entries(md)) if (v?.unit) units[k] = v.unit;
    } catch {
      /* no metadata */
    }
    out.set(base, units);
  }
  return out;
}

export function loadRun(runDir: string): ReportInput {
  const dir = resolve(runDir);
  const model = buildModel(readLedger(dir));
  fillFromResultsJson(model, dir);
  const tails = new Map<string, string[]>();
  for (const t of model.tasks.filter((x) => x.status === 'FAILED').slice(0, MAX_TAILS)) {
    const log = t.info?.logPath;
    const path = located(log, dir, model.runDir, join(t.name, log ? basename(log) : `${t.name}.log`));
    const asked = isAbsolute(path) ? path : resolve(dir, path);
    const own = insideRun(dir, asked);
    tails.set(
      t.name,
      own
        ? tailLines(own)
        : existsSync(asked)
          ? [`(not shown: ${asked} is not a file of this run folder)`]
          : [],
    );
  }
  return { model, tails, units: unitsByBase(model, dir), monitor: monitorCharts(dir) };
}

/** Builds and writes the report (atomically); returns its path. */
export function writeRunReport(runDir: string, out?: string): string {
  const parts = renderReportParts(loadRun(runDir));
  const path = resolve(out ?? join(runDir, REPORT_FILE));
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    // piece by piece: the page is never joined into one string nor encoded whole
    const fd = openSync(tmp, 'w');
    try {
      for (const part of parts) writeSync(fd, part);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true }); // a full disk leaves no half-written temp file behind
    throw e;
  }
  return path;
}
