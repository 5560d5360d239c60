/**
 * Configurations and metrics over collected rows. A configuration is a workflow's task (its base
 * name: every sweep replica of `train` is one task) with the values of the variables that differ
 * between the rows looked at; rows with the same values are repeats of one configuration.
 */
import { RESULT_PREFIX, VAR_PREFIX, type Cell, type Row } from './row.js';

export type Direction = 'max' | 'min';

export interface Metric {
  column: string;
  direction: Direction;
  /** the direction was guessed from the name (no `:max` / `:min` given) */
  guessed: boolean;
}

export class MetricError extends Error {}

const HIGHER_IS_BETTER = /(throughput|tput|tok_s|per_s|qps|rps|speed|accuracy|score)/i;
const LOWER_IS_BETTER = /(latency|ttft|tpot|itl|_ms$|seconds|duration|time|error|loss|fail)/i;

function resolveColumn(name: string, columns: string[]): string {
  for (const c of [name, RESULT_PREFIX + name]) if (columns.includes(c)) return c;
  const results = columns
    .filter((c) => c.startsWith(RESULT_PREFIX))
    .map((c) => c.slice(RESULT_PREFIX.length));
  throw new MetricError(
    `no metric '${name}' in the collected rows (result fields: ${results.join(', ') || 'none'})`,
  );
}

/** `output_throughput:max` → the column and its direction; no direction: guessed from the name. */
export function parseMetric(spec: string, columns: string[]): Metric {
  const m = /^(.+?)(?::(max|min))?$/.exec(spec.trim());
  if (!m || !m[1]) throw new MetricError(`bad metric '${spec}': expected NAME or NAME:max or NAME:min`);
  const column = resolveColumn(m[1], columns);
  if (m[2]) return { column, direction: m[2] === 'min' ? 'min' : 'max', guessed: false };
  const lower = !HIGHER_IS_BETTER.test(column) && LOWER_IS_BETTER.test(column);
  return { column, direction: lower ? 'min' : 'max', guessed: true };
}

/** Every numeric result field, directions guessed: what `diff` checks when no metric is named. */
export function defaultMetrics(rows: Row[]): Metric[] {
  const cols = new Set<string>();
  for (const r of rows)
    for (const [k, v] of Object.entries(r))
      if (k.startsWith(RESULT_PREFIX) && typeof v === 'number') cols.add(k);
  return [...cols].sort().map((c) => parseMetric(c, [...cols]));
}

export function metricName(m: Metric): string {
  return m.column.startsWith(RESULT_PREFIX) ? m.column.slice(RESULT_PREFIX.length) : m.column;
}

const taskOf = (r: Row) => `${String(r.workflow)}\u0000${String(r.base_task)}`;

/** Per workflow task, the variable columns whose values differ between its rows. */
export function varsByTask(rows: Row[]): Map<string, string[]> {
  const seen = new Map<string, Map<string, Set<string>>>();
  for (const r of rows) {
    let vars = seen.get(taskOf(r));
    if (!vars) seen.set(taskOf(r), (vars = new Map<string, Set<string>>()));
    for (const [k, v] of Object.entries(r)) {
      if (!k.startsWith(VAR_PREFIX)) continue;
      let vals = vars.get(k);
      if (!vals) vars.set(k, (vals = new Set()));
      vals.add(JSON.stringify(v ?? null));
    }
  }
  const out = new Map<string, string[]>();
  for (const [task, vars] of seen)
    out.set(
      task,
      [...vars]
        .filter(([, vals]) => vals.size > 1)
        .map(([k]) => k)
        .sort(),
    );
  return out;
}

/** The variable columns that differ between rows of some workflow task. */
export function differingVariables(rows: Row[]): string[] {
  return [...new Set([...varsByTask(rows).values()].flat())].sort();
}

export interface Config {
  key: string;
  /** `variables_sweep/train BATCH=8 LR=0.01` */
  label: string;
  workflow: Cell;
  task: Cell;
  values: Record<string, Cell>;
  rows: Row[];
}

/**
 * Rows grouped by configuration: per workflow task, only the variables that differ between its
 * rows (`varsByTask`, over all the rows looked at) tell configurations apart.
 */
export function groupConfigs(rows: Row[], vars: Map<string, string[]>): Config[] {
  const by = new Map<string, Config>();
  for (const r of rows) {
    const values: Record<string, Cell> = {};
    for (const v of vars.get(taskOf(r)) ?? []) values[v.slice(VAR_PREFIX.length)] = r[v] ?? null;
    const key = JSON.stringify([r.workflow, r.base_task, values]);
    let c = by.get(key);
    if (!c) {
      const shown = Object.entries(values).map(([k, v]) => `${k}=${v === null ? '-' : String(v)}`);
      c = {
        key,
        label: [`${String(r.workflow)}/${String(r.base_task)}`, ...shown].join(' '),
        workflow: r.workflow,
        task: r.base_task,
        values,
        rows: [],
      };
      by.set(key, c);
    }
    c.rows.push(r);
  }
  return [...by.values()].sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Median absolute deviation, scaled (×1.4826) to estimate a standard deviation. */
export function mad(xs: number[]): number {
  if (xs.length < 2) return 0;
  const m = median(xs);
  return 1.4826 * median(xs.map((x) => Math.abs(x - m)));
}

/** The metric's values in the rows that completed (one per row). */
export function samples(rows: Row[], m: Metric): { value: number; row: Row }[] {
  const out: { value: number; row: Row }[] = [];
  for (const r of rows) {
    const v = r[m.column];
    if (typeof v === 'number' && Number.isFinite(v) && (r.status === 'COMPLETED' || r.status === 'READY'))
      out.push({ value: v, row: r });
  }
  return out;
}
