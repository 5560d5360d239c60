/**
 * `sflow results query "SQL"`: the collected table is the view `results` (read from
 * results.parquet by DuckDB); any SQL DuckDB runs is allowed, over it or over other files.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';
import { openEngine, sqlString, type QueryResult } from './engine.js';
import { STORE_FILES } from './store.js';

export function storeParquet(dir: string): string {
  const file = join(resolve(dir), STORE_FILES.parquet);
  if (!existsSync(file))
    throw new SflowError(
      'results.no_table',
      `${dir}: no collected table (${STORE_FILES.parquet} is missing)`,
      {
        phase: 'usage',
        hint: 'collect first: sflow results collect sflow_output/ [--dir DIR]',
      },
    );
  return file;
}

export async function runQuery(dir: string, sql: string): Promise<QueryResult> {
  const file = storeParquet(dir);
  const engine = await openEngine();
  try {
    await engine.run(`CREATE VIEW results AS SELECT * FROM read_parquet(${sqlString(file)})`);
    try {
      return await engine.query(sql);
    } catch (e) {
      throw new SflowError('results.sql', `the query failed: ${errorMessage(e)}`, {
        phase: 'usage',
        hint: "the table is 'results'; see its columns with: sflow results query 'DESCRIBE results'",
      });
    }
  } finally {
    engine.close();
  }
}
