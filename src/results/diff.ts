/**
 * `sflow results diff BASE CANDIDATE`: per configuration present in both, each metric's relative
 * change with its noise. Method: the median of each side's repeats; the noise is each side's
 * scaled MAD (median absolute deviation × 1.4826), combined as sqrt(mad_b² + mad_c²). A change
 * counts when it is larger than k × that spread AND at least `minRel` of the base median; a
 * counted change in the metric's bad direction is a regression (exit 1).
 */
import {
  groupConfigs,
  mad,
  median,
  metricName,
  samples,
  type Config,
  varsByTask,
  type Metric,
} from './configs.js';
import type { Row } from './row.js';

export interface DiffOptions {
  /** how many spreads a change must exceed (default 3) */
  k: number;
  /** smallest relative change that counts (default 0.05 = 5 %) */
  minRel: number;
}

export const DIFF_DEFAULTS: DiffOptions = { k: 3, minRel: 0.05 };

export type Verdict = 'regression' | 'improvement' | 'unchanged';

export interface DiffLine {
  config: string;
  metric: string;
  direction: Metric['direction'];
  base: { median: number; mad: number; n: number; run: string; runs: string[] };
  candidate: { median: number; mad: number; n: number; run: string; runs: string[] };
  /** (candidate − base) / |base| */
  relative: number;
  /** combined spread relative to |base| */
  noise: number;
  verdict: Verdict;
}

export interface DiffReport {
  lines: DiffLine[];
  /** configurations found on one side only */
  onlyBase: string[];
  onlyCandidate: string[];
  regressions: number;
}

/** The run folder whose value is nearest the median: the one to open first. */
function medianRun(s: { value: number; row: Row }[], med: number): string {
  let best = s[0];
  for (const x of s) if (Math.abs(x.value - med) < Math.abs(best.value - med)) best = x;
  return String(best.row.run_dir);
}

function side(c: Config, m: Metric) {
  const s = samples(c.rows, m);
  const med = median(s.map((x) => x.value));
  return {
    median: med,
    mad: mad(s.map((x) => x.value)),
    n: s.length,
    run: s.length ? medianRun(s, med) : '',
    runs: [...new Set(s.map((x) => String(x.row.run_dir)))],
  };
}

export function diffRows(
  base: Row[],
  candidate: Row[],
  metrics: Metric[],
  o: DiffOptions = DIFF_DEFAULTS,
): DiffReport {
  const vars = varsByTask([...base, ...candidate]);
  const b = new Map(groupConfigs(base, vars).map((c) => [c.key, c]));
  const c = new Map(groupConfigs(candidate, vars).map((x) => [x.key, x]));
  const lines: DiffLine[] = [];
  for (const [key, bc] of b) {
    const cc = c.get(key);
    if (!cc) continue;
    for (const m of metrics) {
      const bs = side(bc, m);
      const cs = side(cc, m);
      if (!bs.n || !cs.n) continue;
      const scale = Math.abs(bs.median) || 1;
      const change = cs.median - bs.median;
      const spread = Math.sqrt(bs.mad ** 2 + cs.mad ** 2);
      const counts = Math.abs(change) > o.k * spread && Math.abs(change) / scale >= o.minRel;
      const worse = m.direction === 'max' ? change < 0 : change > 0;
      lines.push({
        config: bc.label,
        metric: metricName(m),
        direction: m.direction,
        base: bs,
        candidate: cs,
        relative: change / scale,
        noise: spread / scale,
        verdict: !counts ? 'unchanged' : worse ? 'regression' : 'improvement',
      });
    }
  }
  return {
    lines,
    onlyBase: [...b.keys()].filter((k) => !c.has(k)).map((k) => b.get(k)!.label),
    onlyCandidate: [...c.keys()].filter((k) => !b.has(k)).map((k) => c.get(k)!.label),
    regressions: lines.filter((l) => l.verdict === 'regression').length,
  };
}
