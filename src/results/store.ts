/**
 * The collected table, in one folder (default `sflow_results/`):
 *   results.jsonl       every row (the table's own copy, rewritten atomically)
 *   results.parquet     the same rows for DuckDB, pandas, Spark … (written by DuckDB)
 *   results.csv         the same rows for a spreadsheet
 *   collect-state.json  each run collected (its folder or s3:// archive) and its fingerprint
 * Collecting again reads only runs that are new or changed since (a resumed run replaces its
 * rows); when nothing is new nothing is rewritten and the engine is not even loaded.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openEngine, sqlIdent, sqlString, type Engine } from './engine.js';
import { columnsOf, columnTypes, type Row } from './row.js';

export const STORE_FILES = {
  jsonl: 'results.jsonl',
  parquet: 'results.parquet',
  csv: 'results.csv',
  state: 'collect-state.json',
} as const;
const STATE_SCHEMA = 'sflow.results-collect.v1';

export interface CollectState {
  schema_version: typeof STATE_SCHEMA;
  /** run location → fingerprint */
  runs: Record<string, string>;
}

export function readState(dir: string): CollectState {
  try {
    const s = JSON.parse(readFileSync(join(dir, STORE_FILES.state), 'utf8')) as CollectState;
    if (s.schema_version === STATE_SCHEMA && s.runs && typeof s.runs === 'object') return s;
  } catch {
    /* first collect */
  }
  return { schema_version: STATE_SCHEMA, runs: {} };
}

export function readRows(dir: string): Row[] {
  const path = join(dir, STORE_FILES.jsonl);
  if (!existsSync(path)) return [];
  const out: Row[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) if (line) out.push(JSON.parse(line) as Row);
  return out;
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Loads rows into table `name` of the engine with the columns and types the rows call for. */
export async function loadTable(
  engine: Engine,
  name: string,
  rows: Row[],
  scratch: string,
): Promise<string[]> {
  const columns = columnsOf(rows);
  const types = columnTypes(rows, columns);
  const file = `${scratch}.${process.pid}.load.jsonl`;
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  try {
    const spec = columns.map((c) => `${sqlString(c)}: ${sqlString(types.get(c)!)}`).join(', ');
    if (!rows.length) {
      const defs = columns.map((c) => `${sqlIdent(c)} ${types.get(c)}`).join(', ');
      await engine.run(`CREATE OR REPLACE TABLE ${sqlIdent(name)} (${defs})`);
    } else
      await engine.run(
        `CREATE OR REPLACE TABLE ${sqlIdent(name)} AS SELECT ${columns.map(sqlIdent).join(', ')} FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = {${spec}})`,
      );
  } finally {
    rmSync(file, { force: true });
  }
  return columns;
}

/** Rewrites the Parquet and CSV copies from the rows (each through a temp file and a rename). */
async function writeCopies(dir: string, rows: Row[]): Promise<void> {
  const engine = await openEngine();
  try {
    await loadTable(engine, 'results', rows, join(dir, '.results'));
    for (const [file, opts] of [
      [STORE_FILES.parquet, 'FORMAT parquet'],
      [STORE_FILES.csv, 'FORMAT csv, HEADER true'],
    ] as const) {
      const tmp = join(dir, `.${file}.${process.pid}.tmp`);
      try {
        await engine.run(`COPY results TO ${sqlString(tmp)} (${opts})`);
        renameSync(tmp, join(dir, file));
      } finally {
        rmSync(tmp, { force: true });
      }
    }
  } finally {
    engine.close();
  }
}

export interface StoreUpdate {
  /** rows of new or changed runs, by run location */
  fresh: Map<string, Row[]>;
  /** fingerprint of each run read this time */
  fingerprints: Map<string, string>;
}

/** Merges new rows into the store; returns the total row count. */
export async function updateStore(dir: string, u: StoreUpdate): Promise<number> {
  const out = resolve(dir);
  mkdirSync(out, { recursive: true });
  const state = readState(out);
  const replaced = new Set(u.fresh.keys());
  const rows = readRows(out).filter((r) => !replaced.has(String(r.run_dir)));
  for (const list of u.fresh.values()) rows.push(...list);
  writeAtomic(
    join(out, STORE_FILES.jsonl),
    rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''),
  );
  await writeCopies(out, rows);
  for (const [k, fp] of u.fingerprints) state.runs[k] = fp;
  writeAtomic(join(out, STORE_FILES.state), JSON.stringify(state, null, 1) + '\n');
  return rows.length;
}
