/**
 * The hardware monitor's samples as report charts: `monitorCharts(runDir)` reads the monitor's
 * report folders (docs/monitor.md) — `sflow_monitor/lifecycle/workflow/timeline.csv` when the
 * workflow is monitored, else each monitored task's `lifecycle/<view>/timeline.csv` — and returns
 * per view: GPU utilisation and memory per GPU, CPU and memory per host, network received/sent
 * per host, plus the GPU collection errors. [] without monitor data.
 *
 * The CSV is the long format `timestamp,timestamp_iso,node_id,hostname,resource_type,resource_id,
 * metric_name,metric_value,metric_unit,metric_text,source_log` (times in epoch seconds, skew-
 * corrected). It is read in chunks; a chart keeps at most MAX_POINTS points (means over equal time
 * bins when there are more samples), so a report stays small whatever the run's length.
 */
import { closeSync, existsSync, openSync, readSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface MonitorChart {
  title: string;
  unit: string;
  /** sample times, epoch seconds, ascending */
  x: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
}

export interface MonitorView {
  /** `workflow`, or a monitored task's view name */
  name: string;
  /** the CSV read, relative to the run directory */
  file: string;
  charts: MonitorChart[];
  /** rows read for the charts */
  samples: number;
  hosts: string[];
  /** distinct GPU collection errors (nvidia-smi missing, failing, hanging) */
  errors: string[];
}

interface ChartSpec {
  metric: string;
  title: string;
  units: Array<[string, number]>;
  /** series per GPU (else per host) */
  perGpu?: boolean;
  /** series label after the host */
  suffix?: string;
  /** several metrics drawn on one chart (network: received and sent) */
  chart: string;
}

/** units of a metric, smallest first: [name, how many base units]; the chart uses the largest that fits */
const BYTES_PER_S: Array<[string, number]> = [
  ['B/s', 1],
  ['KB/s', 1e3],
  ['MB/s', 1e6],
  ['GB/s', 1e9],
];
const MIB: Array<[string, number]> = [
  ['MiB', 1],
  ['GiB', 1024],
];
const PCT: Array<[string, number]> = [['%', 1]];

const SPECS: ChartSpec[] = [
  { chart: 'gpu_util', metric: 'gpu_utilization_pct', title: 'GPU utilisation', units: PCT, perGpu: true },
  { chart: 'gpu_mem', metric: 'gpu_memory_used_mib', title: 'GPU memory used', units: MIB, perGpu: true },
  { chart: 'cpu', metric: 'cpu_utilization_pct', title: 'CPU utilisation', units: PCT },
  { chart: 'mem', metric: 'memory_used_pct', title: 'Memory used', units: PCT },
  { chart: 'net', metric: 'rx_bytes_per_s', title: 'Network', units: BYTES_PER_S, suffix: 'received' },
  { chart: 'net', metric: 'tx_bytes_per_s', title: 'Network', units: BYTES_PER_S, suffix: 'sent' },
];

export const MAX_POINTS = 600;
const MAX_VIEWS = 6;
const MAX_ROWS = 5_000_000;
const CHUNK = 1 << 20;

export function monitorTimelinePath(runDir: string, view = 'workflow'): string {
  return join(runDir, 'sflow_monitor', 'lifecycle', view, 'timeline.csv');
}

/** The workflow view when there is one, else every monitored task's view (at most MAX_VIEWS). */
export function monitorCharts(runDir: string): MonitorView[] {
  const lifecycle = join(runDir, 'sflow_monitor', 'lifecycle');
  if (!existsSync(lifecycle)) return [];
  let names: string[];
  try {
    names = readdirSync(lifecycle).sort();
  } catch {
    return [];
  }
  const views = names.includes('workflow') ? ['workflow'] : names.slice(0, MAX_VIEWS);
  const out: MonitorView[] = [];
  for (const name of views) {
    const path = monitorTimelinePath(runDir, name);
    if (!existsSync(path)) continue;
    const v = readTimeline(path);
    if (v.charts.length || v.errors.length)
      out.push({ name, file: `sflow_monitor/lifecycle/${name}/timeline.csv`, ...v });
  }
  return out;
}

type Parsed = Omit<MonitorView, 'name' | 'file'>;

function readTimeline(path: string): Parsed {
  const acc = new Accumulator();
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(CHUNK);
    let rest = '';
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n <= 0) break;
      const text = rest + buf.toString('utf8', 0, n);
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) if (!acc.line(l)) return acc.result();
    }
    if (rest) acc.line(rest);
  } catch {
    /* unreadable: what was read so far */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return acc.result();
}

/** Parses one CSV text (tests, small files). */
export function chartsFromTimelineCsv(text: string): Parsed {
  const acc = new Accumulator();
  for (const l of text.split('\n')) if (!acc.line(l)) break;
  return acc.result();
}

class Accumulator {
  private cols: number[] | undefined;
  private rows = 0;
  private readonly bySpec = new Map<ChartSpec, Map<string, { t: number[]; v: number[] }>>();
  private readonly hosts = new Set<string>();
  private readonly errors = new Set<string>();
  private readonly wanted = new Map(SPECS.map((s) => [s.metric, s]));

  /** false once enough rows were read */
  line(l: string): boolean {
    if (!l) return true;
    if (!this.cols) {
      const head = l.trim().split(',');
      this.cols = ['timestamp', 'hostname', 'resource_id', 'metric_name', 'metric_value', 'metric_text'].map(
        (c) => head.indexOf(c),
      );
      if (this.cols[0] < 0 || this.cols[3] < 0 || this.cols[4] < 0) this.cols = [-1];
      return true;
    }
    const [cT, cHost, cId, cName, cVal, cText] = this.cols;
    if (cT < 0) return false;
    const f = l.split(',');
    const metric = f[cName];
    if (metric === 'gpu_error') {
      if (this.errors.size < 5) this.errors.add(errorText(l, f, cText));
      return true;
    }
    const spec = this.wanted.get(metric);
    if (!spec || f[cVal] === '') return true;
    const t = Number(f[cT]);
    const v = Number(f[cVal]);
    if (!Number.isFinite(t) || !Number.isFinite(v)) return true;
    const host = cHost >= 0 && f[cHost] ? f[cHost] : 'host';
    this.hosts.add(host);
    let label = host;
    if (spec.perGpu) {
      label = `${host}\u0000GPU ${cId >= 0 ? f[cId] : '?'}`;
    } else if (spec.suffix) label = `${host}\u0000${spec.suffix}`;
    let m = this.bySpec.get(spec);
    if (!m) this.bySpec.set(spec, (m = new Map<string, { t: number[]; v: number[] }>()));
    let s = m.get(label);
    if (!s) m.set(label, (s = { t: [], v: [] }));
    s.t.push(t);
    s.v.push(v);
    return ++this.rows < MAX_ROWS;
  }

  result(): Parsed {
    const oneHost = this.hosts.size <= 1;
    const name = (label: string) => {
      const [host, what] = label.split('\u0000');
      if (what === undefined) return oneHost ? 'all' : host;
      return oneHost ? what : `${host} · ${what}`;
    };
    const charts: MonitorChart[] = [];
    for (const chart of [...new Set(SPECS.map((s) => s.chart))]) {
      const specs = SPECS.filter((s) => s.chart === chart);
      const series: Array<{ label: string; t: number[]; v: number[] }> = [];
      for (const spec of specs)
        for (const [label, s] of this.bySpec.get(spec) ?? []) series.push({ label: name(label), ...s });
      if (!series.length) continue;
      series.sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
      let peak = 0;
      for (const x of series) for (const v of x.v) if (v > peak) peak = v;
      const units = specs[0].units;
      const [unit, per] = units.filter(([, k]) => k <= Math.max(peak, 1)).pop() ?? units[0];
      const scaled = per === 1 ? series : series.map((x) => ({ ...x, v: x.v.map((v) => v / per) }));
      charts.push({ title: specs[0].title, unit, ...align(scaled) });
    }
    return { charts, samples: this.rows, hosts: [...this.hosts], errors: [...this.errors] };
  }
}

/** One x for every series: the sample times themselves when few, else means over MAX_POINTS bins. */
function align(
  series: Array<{ label: string; t: number[]; v: number[] }>,
): Omit<MonitorChart, 'title' | 'unit'> {
  const times = new Set<number>();
  for (const s of series) for (const t of s.t) times.add(t);
  if (times.size <= MAX_POINTS) {
    const x = [...times].sort((a, b) => a - b);
    const at = new Map(x.map((t, i) => [t, i]));
    return {
      x,
      series: series.map((s) => {
        const values: Array<number | null> = new Array<number | null>(x.length).fill(null);
        s.t.forEach((t, i) => (values[at.get(t)!] = round(s.v[i])));
        return { label: s.label, values };
      }),
    };
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of times) {
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  const w = Math.max(1e-3, (hi - lo) / MAX_POINTS);
  const bins = MAX_POINTS; // the last sample (t = hi) joins the last bin
  const x = Array.from({ length: bins }, (_, i) => Number((lo + (i + 0.5) * w).toFixed(3)));
  return {
    x,
    series: series.map((s) => {
      const sum = new Float64Array(bins);
      const n = new Uint32Array(bins);
      s.t.forEach((t, i) => {
        const b = Math.min(bins - 1, Math.floor((t - lo) / w));
        sum[b] += s.v[i];
        n[b]++;
      });
      return { label: s.label, values: Array.from(sum, (v, i) => (n[i] ? round(v / n[i]) : null)) };
    }),
  };
}

const round = (v: number) => Number(v.toPrecision(5));

/** The message of a gpu_error row (metric_text may be quoted and hold commas). */
function errorText(line: string, f: string[], cText: number): string {
  if (cText < 0) return 'GPU sampling failed';
  const before = f.slice(0, cText).join(',').length + 1;
  let text = line.slice(before);
  if (text.startsWith('"')) {
    const end = text.search(/"(?=,[^,]*$)/);
    text = (end > 0 ? text.slice(1, end) : text.slice(1)).replace(/""/g, '"');
  } else text = f[cText];
  return text.length > 300 ? `${text.slice(0, 300)}…` : text || 'GPU sampling failed';
}
