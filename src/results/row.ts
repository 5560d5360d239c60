/**
 * One row of the collected table: one task instance of one run. Fixed columns first; then one
 * column per variable (`var_<NAME>`, a sweep replica's own value where it has one), per parsed
 * result field (`result_<name>`) and per monitor summary figure (`mon_<type>_<metric>_<avg|max>`).
 */
export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

export const FIXED_COLUMNS = [
  'run_id',
  'run_dir',
  'workflow',
  'recipe_digest',
  'started_at',
  'run_status',
  'backend',
  'task',
  'base_task',
  'replica_index',
  'nodes',
  'node_names',
  'gpus',
  'status',
  'attempts',
  'duration_s',
] as const;

export const VAR_PREFIX = 'var_';
export const RESULT_PREFIX = 'result_';
export const MONITOR_PREFIX = 'mon_';

/** A column name made of a variable, result or metric name: letters, digits and `_` only. */
export function columnName(prefix: string, name: string): string {
  return prefix + name.replace(/[^A-Za-z0-9_]/g, '_');
}

/** The table's columns in a stable order: fixed, then variables, results, monitor, each sorted. */
export function columnsOf(rows: Iterable<Row>): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  const fixed: string[] = [...FIXED_COLUMNS];
  const rest = [...seen].filter((c) => !(FIXED_COLUMNS as readonly string[]).includes(c));
  const group = (p: string) => rest.filter((c) => c.startsWith(p)).sort();
  const known = [VAR_PREFIX, RESULT_PREFIX, MONITOR_PREFIX];
  const other = rest.filter((c) => !known.some((p) => c.startsWith(p))).sort();
  return [...fixed, ...group(VAR_PREFIX), ...group(RESULT_PREFIX), ...group(MONITOR_PREFIX), ...other];
}

export type ColumnType = 'DOUBLE' | 'BOOLEAN' | 'VARCHAR';

/** DOUBLE when every value present is a number, BOOLEAN when every one is a boolean, else VARCHAR. */
export function columnTypes(rows: Row[], columns: string[]): Map<string, ColumnType> {
  const out = new Map<string, ColumnType>();
  for (const c of columns) {
    let num = true;
    let bool = true;
    for (const r of rows) {
      const v = r[c];
      if (v === null || v === undefined) continue;
      if (typeof v !== 'number') num = false;
      if (typeof v !== 'boolean') bool = false;
      if (!num && !bool) break;
    }
    out.set(c, num ? 'DOUBLE' : bool ? 'BOOLEAN' : 'VARCHAR');
  }
  return out;
}
