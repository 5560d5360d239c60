/**
 * `sflow_monitor.log`: the terminal-friendly overview (monitor.md §9), in this order: header,
 * min/avg/max tables (auto-scaled units), sparklines, windows, GPU collection errors, report
 * folders, task events.
 */
import { isoLocal, summaryRows } from './csv.js';
import type { Dataset } from './ingest.js';
import type { TaskEvent } from './markers.js';
import { fmtNum, scaleFor } from './metrics.js';
import { bucketMeans, type Clipped } from './stats.js';

export interface MonitorLogInput {
  workflow: string;
  runId: string;
  t0: number;
  t1: number;
  ds: Dataset;
  /** everything of the run window, all nodes */
  all: Clipped[];
  scopes: string;
  interval: string;
  windows: string[];
  reports: string[];
  /** why `reports` is empty (monitor-schedule noReportsReason) */
  noReports: string;
  events: TaskEvent[];
  warnings: string[];
}

const BLOCKS = '▁▂▃▄▅▆▇█';
const WIDTH = 60;

export function sparkline(values: number[], max?: number): string {
  const m = max ?? Math.max(...values.filter(Number.isFinite), 0);
  return values
    .map((v) => (Number.isFinite(v) ? BLOCKS[m > 0 ? Math.min(7, Math.floor((v / m) * 7.999)) : 0] : ' '))
    .join('');
}

const SPARKS: Array<[string, string[], number, number | undefined]> = [
  ['GPU util %', ['gpu_utilization_pct'], 1, 100],
  ['GPU mem used MiB', ['gpu_memory_used_mib'], 1, undefined],
  ['GPU power W', ['gpu_power_w'], 1, undefined],
  ['GPU temp C', ['gpu_temperature_c'], 1, undefined],
  ['CPU util %', ['cpu_utilization_pct'], 1, 100],
  ['Mem used %', ['memory_used_pct'], 1, 100],
  ['Disk used %', ['disk_used_pct'], 1, 100],
  ['Net RX MiB/s', ['rx_bytes_per_s'], 1 / 1048576, undefined],
  ['Net TX MiB/s', ['tx_bytes_per_s'], 1 / 1048576, undefined],
];

function elapsed(ms: number): string {
  return `+${(ms / 1000).toFixed(3)}s`;
}

export function renderMonitorLog(i: MonitorLogInput): string {
  const o: string[] = [];
  const samples = new Map<string, number>();
  for (const c of i.all)
    if (c.s.metric !== 'load_5m') samples.set(c.s.type, Math.max(samples.get(c.s.type) ?? 0, c.hi - c.lo));
  o.push('sflow hardware monitor', '======================');
  o.push(`Workflow : ${i.workflow} (run ${i.runId})`);
  o.push(`Nodes    : ${i.ds.hosts.map((h) => `${h.host} (node ${h.nodeId})`).join(', ') || '(no samples)'}`);
  o.push(`Scopes   : ${i.scopes}`);
  o.push(`Interval : ${i.interval}`);
  o.push(`Window   : ${isoLocal(i.t0)} → ${isoLocal(i.t1)} (${((i.t1 - i.t0) / 1000).toFixed(1)} s)`);
  o.push(
    `Samples  : ${[...samples].map(([k, v]) => `${k} ${v}`).join(', ') || '0'}${i.ds.customLines ? `; custom lines ${i.ds.customLines}` : ''}`,
  );
  o.push('');
  o.push('Metrics (whole run, all nodes)');
  o.push(
    `  ${'scope'.padEnd(8)}${'metric'.padEnd(28)}${'unit'.padEnd(11)}${'n'.padStart(8)}${'min'.padStart(11)}${'avg'.padStart(11)}${'max'.padStart(11)}`,
  );
  for (const r of summaryRows(i.all)) {
    const sc = scaleFor(r.unit, r.max);
    const f = (v: number) => fmtNum(v * sc.factor).padStart(11);
    o.push(
      `  ${r.type.padEnd(8)}${r.metric.padEnd(28)}${sc.unit.padEnd(11)}${String(r.n).padStart(8)}${f(r.min)}${f(r.avg)}${f(r.max)}`,
    );
  }
  o.push('');
  o.push(`Timelines (${WIDTH} columns over the window)`);
  for (const [name, metrics, factor, max] of SPARKS) {
    const list = i.all.filter((c) => metrics.includes(c.s.metric));
    if (!list.length) continue;
    const pts = bucketMeans(list, i.t0, i.t1, WIDTH);
    const vals: number[] = new Array<number>(WIDTH).fill(NaN);
    const span = Math.max(1, i.t1 - i.t0);
    for (const [t, v] of pts) vals[Math.min(WIDTH - 1, Math.floor(((t - i.t0) / span) * WIDTH))] = v * factor;
    // a column without a sample (interval longer than a column) repeats the previous value
    const firstVal = vals.find(Number.isFinite) ?? 0;
    for (let k = 0; k < WIDTH; k++) if (!Number.isFinite(vals[k])) vals[k] = k ? vals[k - 1] : firstVal;
    o.push(
      `  ${name.padEnd(17)}${sparkline(vals, max)}  max ${fmtNum(Math.max(...vals.filter(Number.isFinite)))}`,
    );
  }
  o.push('');
  o.push('Windows');
  o.push(...(i.windows.length ? i.windows.map((w) => `  ${w}`) : ['  (none)']));
  o.push('');
  o.push('GPU Collection Errors');
  const errs = new Map<string, { n: number; first: number; last: number }>();
  for (const e of i.ds.gpuErrors) {
    const k = `${e.host}: ${e.message}`;
    const x = errs.get(k);
    if (x) {
      x.n++;
      x.last = e.t;
    } else errs.set(k, { n: 1, first: e.t, last: e.t });
  }
  if (!errs.size) o.push('  (none)');
  for (const [k, x] of errs) o.push(`  ${k} (×${x.n}, ${isoLocal(x.first)} … ${isoLocal(x.last)})`);
  o.push('');
  if (i.warnings.length) {
    o.push('Warnings');
    for (const w of i.warnings) o.push(`  ⚠ ${w}`);
    o.push('');
  }
  o.push('Reports (under sflow_monitor/)');
  o.push(...(i.reports.length ? i.reports.map((r) => `  ${r}`) : [`  (none: ${i.noReports})`]));
  o.push('');
  o.push('Task Events');
  const evs = [...i.events].sort((a, b) => a.t - b.t);
  if (!evs.length) o.push('  (none)');
  for (const e of evs) o.push(`  ${elapsed(e.t - i.t0)} ${isoLocal(e.t)} ${e.kind} ${e.task}`);
  return o.join('\n') + '\n';
}
