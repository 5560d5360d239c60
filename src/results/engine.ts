/**
 * The embedded analytics engine: DuckDB through `@duckdb/node-api` (a native module, loaded only
 * by `sflow results`). In-memory database per command; the collected table lives in files
 * (Parquet, CSV, JSON lines) that DuckDB reads and writes directly.
 */
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';
import type { Cell } from './row.js';

export interface QueryResult {
  columns: string[];
  rows: Cell[][];
}

export interface Engine {
  run(sql: string): Promise<void>;
  query(sql: string): Promise<QueryResult>;
  close(): void;
}

type DuckApi = typeof import('@duckdb/node-api');

async function loadDuckDb(): Promise<DuckApi> {
  try {
    return await import('@duckdb/node-api');
  } catch (e) {
    if (e instanceof SflowError) throw e;
    throw new SflowError('results.no_engine', `the DuckDB engine cannot be loaded: ${errorMessage(e)}`, {
      phase: 'limitation',
      exitCode: 1,
      hint: 'reinstall sflow with its dependencies (npm install --global sflow-cli; in a checkout: npm install), which include @duckdb/node-api',
    });
  }
}

/** A plain cell: BIGINT as a number, DECIMAL as a double, dates and lists as their text. */
function cell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  const d = v as { toDouble?: () => number };
  if (typeof d.toDouble === 'function') return d.toDouble();
  return String(v);
}

export async function openEngine(): Promise<Engine> {
  const duck = await loadDuckDb();
  const db = await duck.DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  return {
    async run(sql) {
      await conn.run(sql);
    },
    async query(sql) {
      const reader = await conn.runAndReadAll(sql);
      const columns = reader.columnNames();
      const rows = reader.getRows().map((r) => r.map(cell));
      return { columns, rows };
    },
    close() {
      conn.closeSync();
      db.closeSync();
    },
  };
}

/** `'text'` as an SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** `"name"` as an SQL identifier. */
export function sqlIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
