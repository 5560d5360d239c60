/**
 * The hook for hardware charts: `monitorCharts(runDir)` turns the run's monitor samples into
 * chart series, or returns [] when the run has no monitor data (the common case today).
 *
 * What it reads: `sflow_monitor/lifecycle/workflow/timeline.csv`, the whole-pool report in the
 * long format of spec monitor.md §8.2 (`timestamp,timestamp_iso,node_id,hostname,resource_type,
 * resource_id,metric_name,metric_value,metric_unit,…`). When the monitor's own layout settles,
 * only this file changes: the page renders whatever `MonitorChart`s it returns, with the run's
 * task events as markers. Bounded: at most MAX_ROWS samples are read.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface MonitorChart {
  title: string;
  unit: string;
  /** sample times, epoch seconds, ascending */
  x: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
}

/** Which metrics become charts, in this order (others are left to the monitor's own report). */
const CHARTS: Array<{ metric: string; title: string; perDevice: boolean }> = [
  { metric: 'gpu_utilization_pct', title: 'GPU utilisation', perDevice: true },
  { metric: 'gpu_memory_used_mib', title: 'GPU memory used', perDevice: true },
  { metric: 'cpu_utilization_pct', title: 'CPU utilisation', perDevice: false },
  { metric: 'memory_used_pct', title: 'Memory used', perDevice: false },
  { metric: 'rx_bytes_per_s', title: 'Network received', perDevice: false },
  { metric: 'tx_bytes_per_s', title: 'Network sent', perDevice: false },
];

const MAX_BYTES = 64 * 1024 * 1024;
const MAX_ROWS = 500_000;

export function monitorTimelinePath(runDir: string): string {
  return join(runDir, 'sflow_monitor', 'lifecycle', 'workflow', 'timeline.csv');
}

export function monitorCharts(runDir: string): MonitorChart[] {
  const path = monitorTimelinePath(runDir);
  if (!existsSync(path) || statSync(path).size > MAX_BYTES) return [];
  return chartsFromTimelineCsv(readFileSync(path, 'utf8'));
}

/** Parses the long-format timeline (no quoted fields are needed by the columns read here). */
export function chartsFromTimelineCsv(text: string): MonitorChart[] {
  const lines = text.split('\n');
  const head = (lines[0] ?? '').trim().split(',');
  const col = (n: string) => head.indexOf(n);
  const [cT, cHost, cType, cId, cName, cVal, cUnit] = [
    'timestamp',
    'hostname',
    'resource_type',
    'resource_id',
    'metric_name',
    'metric_value',
    'metric_unit',
  ].map(col);
  if ([cT, cName, cVal].some((c) => c < 0)) return [];
  const wanted = new Map(CHARTS.map((c) => [c.metric, c]));
  // metric → series label → time → value
  const data = new Map<string, { unit: string; series: Map<string, Map<number, number>> }>();
  for (let i = 1; i < lines.length && i <= MAX_ROWS; i++) {
    const f = lines[i].split(',');
    const spec = wanted.get(f[cName]);
    if (!spec) continue;
    const t = Number(f[cT]);
    const v = Number(f[cVal]);
    if (!Number.isFinite(t) || f[cVal] === '' || !Number.isFinite(v)) continue;
    const host = cHost >= 0 ? f[cHost] : '';
    const label =
      spec.perDevice && cId >= 0 && f[cId] !== ''
        ? `${host} ${f[cType] ?? ''}${f[cId]}`.trim()
        : host || 'all';
    let d = data.get(spec.metric);
    if (!d) data.set(spec.metric, (d = { unit: cUnit >= 0 ? (f[cUnit] ?? '') : '', series: new Map() }));
    let s = d.series.get(label);
    if (!s) d.series.set(label, (s = new Map<number, number>()));
    s.set(t, v);
  }
  const out: MonitorChart[] = [];
  for (const spec of CHARTS) {
    const d = data.get(spec.metric);
    if (!d) continue;
    const times = new Set<number>();
    for (const s of d.series.values()) for (const t of s.keys()) times.add(t);
    const x = [...times].sort((a, b) => a - b);
    out.push({
      title: spec.title,
      unit: d.unit,
      x,
      series: [...d.series].map(([label, s]) => ({ label, values: x.map((t) => s.get(t) ?? null) })),
    });
  }
  return out;
}
