/**
 * Bulk CSV input shared by `compose --bulk-input` and `batch --bulk-input` (config.md §4.9):
 * one row = one recipe. Column `sflow_config_file` lists the row's YAML files (space separated,
 * relative to the CSV's folder); `job_name` names the output; `missable_tasks` adds
 * --missable-tasks patterns; every other column overrides a variable or an artifact.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';

export const CONFIG_COLUMN = 'sflow_config_file';
const RESERVED = new Set([CONFIG_COLUMN, 'job_name', 'missable_tasks']);
const NODE_COLUMNS = ['SLURM_NODES', 'NUM_SLURM_NODES', 'NUM_NODES'];

export interface BulkRow {
  /** 1-based data row number */
  index: number;
  /** line of the CSV file the row starts on */
  line: number;
  /** absolute paths, in order */
  files: string[];
  jobName?: string;
  missable: string[];
  /** non-empty override cells: column → value */
  cells: Record<string, string>;
}

export interface BulkCsv {
  path: string;
  /** override columns (not reserved) */
  columns: string[];
  rows: BulkRow[];
}

/** a mistake on the command line (a --row selector, a CSV that is not there): exit 2 */
const usage = (code: string, message: string, hint?: string) =>
  new SflowError(code, message, { phase: 'usage', hint });
/** a mistake inside the CSV (like one inside a recipe): a configuration error, exit 1 */
const invalid = (code: string, message: string, hint?: string) =>
  new SflowError(code, message, { phase: 'load', hint });

export function readBulkCsv(path: string): BulkCsv {
  const abs = resolve(path);
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    throw usage(
      'bulk.csv_read',
      `${path}: cannot read the CSV: ${errorMessage(e)}`,
      'check the --bulk-input path',
    );
  }
  try {
    records = parse(text, {
      columns: (h: string[]) => h.map((c) => c.trim()),
      skip_empty_lines: true,
      trim: true,
      info: true,
      bom: true,
    });
  } catch (e) {
    throw invalid('bulk.csv_parse', `${path}: not a readable CSV: ${errorMessage(e)}`);
  }
  const header = records.length ? Object.keys(records[0].record) : [];
  if (records.length === 0) throw invalid('bulk.csv_empty', `${path}: no data rows`);
  if (!header.includes(CONFIG_COLUMN))
    throw invalid(
      'bulk.csv_no_config_column',
      `${path}:1:1: the CSV has no '${CONFIG_COLUMN}' column`,
      `columns found: ${header.join(', ')}; '${CONFIG_COLUMN}' lists each row's YAML files, space separated`,
    );
  const base = dirname(abs);
  const rows = records.map(({ record, info }, i) => {
    const line = info.lines;
    const list = (record[CONFIG_COLUMN] ?? '').split(/\s+/).filter(Boolean);
    if (list.length === 0)
      throw invalid(
        'bulk.csv_blank_config',
        `${path}:${line}:1: row ${i + 1} has an empty '${CONFIG_COLUMN}'`,
        'every row names at least one YAML file (relative to the CSV folder)',
      );
    const cells: Record<string, string> = {};
    for (const [k, v] of Object.entries(record)) if (!RESERVED.has(k) && v !== '') cells[k] = v;
    return {
      index: i + 1,
      line,
      files: list.map((f) => resolve(base, f)),
      jobName: record.job_name || undefined,
      missable: (record.missable_tasks ?? '').split(/[\s,]+/).filter(Boolean),
      cells,
    };
  });
  return { path: abs, columns: header.filter((c) => !RESERVED.has(c)), rows };
}

/** CLI files first, then the row's, each path once (first occurrence kept). */
export function rowFiles(cliFiles: string[], row: BulkRow): string[] {
  const seen = new Set<string>();
  return [...cliFiles.map((f) => resolve(f)), ...row.files].filter((f) => !seen.has(f) && seen.add(f));
}

/**
 * `--row` selectors (1-based, repeatable, unioned): `N`, `N,M`, `[N,M]`, and Python-style
 * slices with an exclusive end `A:B`, `A:B:S` (either bound may be left out).
 */
export function selectRows(selectors: string[], count: number): number[] {
  const picked = new Set<number>();
  const bad = (s: string, why: string) =>
    usage(
      'bulk.row_selector',
      `--row '${s}': ${why}`,
      `rows are 1..${count}; forms: 3, 1,4, [1,4], 2:5, 1:10:2`,
    );
  for (const raw of selectors) {
    for (const part of raw.replace(/^\s*\[|\]\s*$/g, '').split(',')) {
      const s = part.trim();
      if (s === '') continue;
      if (/^\d+$/.test(s)) {
        const n = Number(s);
        if (n < 1 || n > count) throw bad(raw, `row ${n} does not exist`);
        picked.add(n);
        continue;
      }
      const m = /^(\d*):(\d*)(?::(\d+))?$/.exec(s);
      if (!m) throw bad(raw, `cannot read '${s}'`);
      const start = m[1] ? Number(m[1]) : 1;
      const end = m[2] ? Number(m[2]) : count + 1;
      const step = m[3] ? Number(m[3]) : 1;
      if (start < 1 || step < 1) throw bad(raw, 'rows start at 1 and steps are positive');
      for (let n = start; n < end && n <= count; n += step) picked.add(n);
    }
  }
  return [...picked].sort((a, b) => a - b);
}

const sanitize = (s: string) =>
  s
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');

/**
 * Output names: `job_name`, else the row's distinctive config stems, its node count (`<N>n`) and
 * short column values that differ between rows; `[A-Za-z0-9_-]`, at most 30 characters, then
 * `_<row number as 3 digits>`.
 */
export function rowNames(rows: BulkRow[]): string[] {
  // what tells apart the rows that need a derived name
  const derived = rows.filter((r) => !r.jobName);
  const everywhere = (f: string) => derived.every((r) => r.files.includes(f));
  const varying = (c: string) => new Set(derived.map((r) => r.cells[c] ?? '')).size > 1;
  const columns = [...new Set(derived.flatMap((r) => Object.keys(r.cells)))].filter(varying);
  return rows.map((r) => {
    let stem: string;
    if (r.jobName) stem = r.jobName;
    else {
      const parts = r.files.filter((f) => !everywhere(f)).map((f) => basename(f, extname(f)));
      const nodes = NODE_COLUMNS.find((c) => r.cells[c] !== undefined);
      if (nodes) parts.push(`${r.cells[nodes]}n`);
      for (const c of columns)
        if (!NODE_COLUMNS.includes(c) && r.cells[c] !== undefined && r.cells[c].length <= 16)
          parts.push(r.cells[c]);
      stem = parts.join('_') || 'row';
    }
    return `${sanitize(stem).slice(0, 30).replace(/_$/, '') || 'row'}_${String(r.index).padStart(3, '0')}`;
  });
}
