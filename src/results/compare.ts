/**
 * `sflow results compare`: configurations (grouped by the variables that differ), each metric's
 * median over its repeats, the best configuration by the first metric, and with two metrics the
 * Pareto front: the configurations no other one beats on both.
 */
import {
  differingVariables,
  groupConfigs,
  varsByTask,
  median,
  metricName,
  samples,
  type Metric,
} from './configs.js';
import { VAR_PREFIX, type Cell, type Row } from './row.js';

export interface ComparePoint {
  config: string;
  values: Record<string, Cell>;
  /** median per metric (NaN when the configuration has no value for it) */
  metrics: number[];
  n: number;
  /** the run nearest the first metric's median, and its report */
  run: string;
  report: string;
  onFront: boolean;
}

export interface CompareReport {
  variables: string[];
  metrics: { name: string; direction: Metric['direction']; guessed: boolean }[];
  points: ComparePoint[];
  best?: ComparePoint;
  front: ComparePoint[];
}

const better = (d: Metric['direction'], a: number, b: number) => (d === 'max' ? a > b : a < b);

/** a dominates b: at least as good on every metric, strictly better on one. */
function dominates(a: ComparePoint, b: ComparePoint, ms: Metric[]): boolean {
  let strictly = false;
  for (let i = 0; i < ms.length; i++) {
    if (better(ms[i].direction, b.metrics[i], a.metrics[i])) return false;
    if (better(ms[i].direction, a.metrics[i], b.metrics[i])) strictly = true;
  }
  return strictly;
}

function reportOf(runDir: string): string {
  return runDir.startsWith('s3://') ? '' : `${runDir.replace(/\/+$/, '')}/report.html`;
}

export function compareRows(rows: Row[], metrics: Metric[]): CompareReport {
  const vars = differingVariables(rows);
  const points: ComparePoint[] = [];
  for (const c of groupConfigs(rows, varsByTask(rows))) {
    const meds = metrics.map((m) => median(samples(c.rows, m).map((s) => s.value)));
    if (meds.some((v) => Number.isNaN(v))) continue;
    const first = samples(c.rows, metrics[0]);
    let run = first[0]?.row;
    for (const s of first)
      if (Math.abs(s.value - meds[0]) < Math.abs(Number(run?.[metrics[0].column]) - meds[0])) run = s.row;
    const dir = String(run?.run_dir ?? '');
    points.push({
      config: c.label,
      values: c.values,
      metrics: meds,
      n: first.length,
      run: dir,
      report: reportOf(dir),
      onFront: false,
    });
  }
  let best: ComparePoint | undefined;
  for (const p of points) if (!best || better(metrics[0].direction, p.metrics[0], best.metrics[0])) best = p;
  const front =
    metrics.length >= 2
      ? points.filter((p) => !points.some((q) => q !== p && dominates(q, p, metrics.slice(0, 2))))
      : [];
  for (const p of front) p.onFront = true;
  front.sort((a, b) => a.metrics[0] - b.metrics[0]);
  return {
    variables: vars.map((v) => v.slice(VAR_PREFIX.length)),
    metrics: metrics.map((m) => ({ name: metricName(m), direction: m.direction, guessed: m.guessed })),
    points,
    best,
    front,
  };
}
