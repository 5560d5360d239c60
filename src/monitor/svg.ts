/**
 * The report chart: a multi-panel SVG line timeline, no third-party code (monitor.md §8.1).
 * GPU panels draw one line per device, each labelled with its own avg/max; node-level scopes are
 * averaged. Task-event markers are vertical rules over every panel with their labels drawn in
 * place (dotted = start-type, solid = end-type).
 */
import { clusterEvents, type TaskEvent } from './markers.js';
import { fmtNum, scaleFor } from './metrics.js';
import { bucketMeans, statsOf, type Clipped } from './stats.js';

export interface ChartInput {
  title: string;
  subtitle: string;
  t0: number;
  t1: number;
  series: Clipped[];
  events: TaskEvent[];
}

interface Line {
  key: string;
  name: string;
  list: Clipped[];
}

interface Panel {
  title: string;
  unit: string;
  fixedMax?: number;
  lines: (all: Clipped[]) => Line[];
}

const perDevice = (metric: string) => (all: Clipped[]) => {
  const mine = all.filter((c) => c.s.metric === metric);
  const hosts = new Set(mine.map((c) => c.s.host));
  const by = new Map<string, Line>();
  for (const c of mine) {
    const key = `gpu-${hosts.size > 1 ? `${c.s.host}-` : ''}${c.s.rid}`;
    const name = `${hosts.size > 1 ? `${c.s.host} ` : ''}GPU ${c.s.rid}`;
    const l = by.get(key) ?? { key, name, list: [] };
    l.list.push(c);
    by.set(key, l);
  }
  return [...by.values()].sort((a, b) => a.key.localeCompare(b.key, 'en', { numeric: true }));
};

const averaged = (pairs: Array<[string, string]>) => (all: Clipped[]) =>
  pairs
    .map(([metric, name]) => ({ key: metric, name, list: all.filter((c) => c.s.metric === metric) }))
    .filter((l) => l.list.length > 0);

const PANELS: Panel[] = [
  { title: 'GPU utilization', unit: '%', fixedMax: 100, lines: perDevice('gpu_utilization_pct') },
  { title: 'GPU memory used', unit: 'MiB', lines: perDevice('gpu_memory_used_mib') },
  { title: 'GPU power', unit: 'W', lines: perDevice('gpu_power_w') },
  { title: 'GPU temperature', unit: 'C', lines: perDevice('gpu_temperature_c') },
  { title: 'CPU utilization', unit: '%', fixedMax: 100, lines: averaged([['cpu_utilization_pct', 'CPU']]) },
  { title: 'Load average', unit: 'load', lines: averaged([['load_1m', 'load 1 min']]) },
  { title: 'Memory used', unit: '%', fixedMax: 100, lines: averaged([['memory_used_pct', 'Memory']]) },
  { title: 'Disk used (/)', unit: '%', fixedMax: 100, lines: averaged([['disk_used_pct', 'Disk']]) },
  {
    title: 'Network',
    unit: 'bytes/s',
    lines: averaged([
      ['rx_bytes_per_s', 'RX'],
      ['tx_bytes_per_s', 'TX'],
    ]),
  },
];

const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
  '#bcbd22',
];
const W = 1200;
const LEFT = 70;
const PLOT_W = 780;
const PANEL_H = 130;
const GAP = 46;
const MAX_POINTS = 600;

export function escapeXml(s: string): string {
  return s.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

/** The text of a series label: `GPU 0 · avg 45.0% · max 98.0%` (values in the display unit). */
export function seriesLabel(name: string, avg: number, max: number, unit: string): string {
  const u = unit === '%' ? '%' : unit ? ` ${unit}` : '';
  return `${name} · avg ${fmtNum(avg)}${u} · max ${fmtNum(max)}${u}`;
}

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function fmtElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${String(s % 60).padStart(2, '0')}s` : ''}`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function timeTicks(span: number): number[] {
  const steps = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
  ].map((s) => s * 1000);
  const step = steps.find((s) => span / s <= 8) ?? steps[steps.length - 1];
  const out: number[] = [];
  for (let t = 0; t <= span; t += step) out.push(t);
  return out;
}

/** The chart, or undefined when the view holds no plottable data. */
export function renderTimelineSvg(c: ChartInput): string | undefined {
  const span = Math.max(1000, c.t1 - c.t0);
  const x = (t: number) => LEFT + ((t - c.t0) / span) * PLOT_W;
  const panels = PANELS.map((p) => ({ p, lines: p.lines(c.series) })).filter((e) => e.lines.length > 0);
  if (panels.length === 0) return undefined;
  // events just outside the window (a task's submit a few ms before its start) sit on the edge
  const edge = span * 0.01;
  const clusters = clusterEvents(c.events, c.t0 - edge, c.t1 + edge, span * 0.015);
  const clampX = (t: number) => Math.min(LEFT + PLOT_W, Math.max(LEFT, x(t)));
  // marker labels: greedy rows so that labels close together do not overlap
  const rowEnds: number[] = [];
  const placed = clusters.map((m) => {
    const lx = clampX(m.t) + 3;
    const w = m.label.length * 5.6 + 6;
    let row = rowEnds.findIndex((end) => end < lx);
    if (row < 0) row = rowEnds.length < 5 ? rowEnds.length : rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[row] = lx + w;
    return { m, lx, row };
  });
  const top = 58 + rowEnds.length * 13;
  const height = top + panels.length * (PANEL_H + GAP) + 10;
  const o: string[] = [];
  o.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="DejaVu Sans,Verdana,Helvetica,Arial,sans-serif" font-size="11">`,
    `<rect width="${W}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="20" font-size="15" font-weight="bold">${escapeXml(c.title)}</text>`,
    `<text x="${LEFT}" y="37" fill="#555555">${escapeXml(c.subtitle)}</text>`,
  );
  panels.forEach(({ p, lines }, i) => {
    const y0 = top + i * (PANEL_H + GAP) + 18;
    const withStats = lines.map((l) => ({ l, st: statsOf(l.list) }));
    const rawMax = Math.max(...withStats.map((e) => e.st.max));
    const sc = scaleFor(p.unit, rawMax);
    const yMax = p.fixedMax ?? niceMax(rawMax * sc.factor);
    const y = (v: number) => y0 + PANEL_H - (Math.min(Math.max(v, 0), yMax) / yMax) * PANEL_H;
    const unitText = sc.unit === 'load' ? '' : sc.unit;
    o.push(`<g class="panel" data-panel="${escapeXml(lines[0].list[0].s.metric)}">`);
    o.push(
      `<text x="${LEFT}" y="${y0 - 6}" font-weight="bold">${escapeXml(unitText ? `${p.title} (${unitText})` : p.title)}</text>`,
    );
    o.push(
      `<rect x="${LEFT}" y="${y0}" width="${PLOT_W}" height="${PANEL_H}" fill="#fafafa" stroke="#bbbbbb"/>`,
    );
    for (const f of [0, 0.5, 1]) {
      const gy = y0 + PANEL_H - f * PANEL_H;
      o.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${gy}" y2="${gy}" stroke="#e4e4e4"/>`);
      o.push(
        `<text x="${LEFT - 5}" y="${gy + 4}" text-anchor="end" fill="#555555">${fmtNum(f * yMax)}</text>`,
      );
    }
    for (const t of timeTicks(span)) {
      o.push(
        `<text x="${x(c.t0 + t).toFixed(1)}" y="${y0 + PANEL_H + 13}" text-anchor="middle" fill="#555555">${fmtElapsed(t)}</text>`,
      );
    }
    withStats.forEach(({ l, st }, k) => {
      const color = COLORS[k % COLORS.length];
      const total = l.list.reduce((n, e) => n + e.hi - e.lo, 0);
      const pts: Array<[number, number]> =
        l.list.length === 1 && total <= MAX_POINTS
          ? Array.from({ length: total }, (_, j) => [
              l.list[0].s.t[l.list[0].lo + j],
              l.list[0].s.v[l.list[0].lo + j],
            ])
          : bucketMeans(l.list, c.t0, c.t1, MAX_POINTS);
      const d = pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v * sc.factor).toFixed(1)}`).join(' ');
      o.push(
        `<polyline class="series" data-series="${escapeXml(l.key)}" fill="none" stroke="${color}" stroke-width="1.5" points="${d}"/>`,
      );
      const label = seriesLabel(l.name, st.avg * sc.factor, st.max * sc.factor, unitText);
      const ly = y0 + 10 + k * 14;
      o.push(`<rect x="${LEFT + PLOT_W + 12}" y="${ly - 8}" width="10" height="3" fill="${color}"/>`);
      o.push(
        `<text class="series-label" data-series="${escapeXml(l.key)}" x="${LEFT + PLOT_W + 26}" y="${ly}" fill="${color}">${escapeXml(label)}</text>`,
      );
    });
    o.push('</g>');
  });
  const yTop = top + 10;
  const yBottom = height - 10;
  for (const { m, lx, row } of placed) {
    const mx = clampX(m.t).toFixed(1);
    const dash = m.style === 'start' ? ' stroke-dasharray="2,3"' : '';
    const title = m.events.map((e) => `${e.task} ${e.kind}`).join(', ');
    o.push(`<g class="event ${m.style}"><title>${escapeXml(title)}</title>`);
    o.push(
      `<line x1="${mx}" x2="${mx}" y1="${yTop}" y2="${yBottom}" stroke="#444444" stroke-width="1"${dash}/>`,
    );
    o.push(
      `<text class="event-label" x="${lx.toFixed(1)}" y="${56 + row * 13}" font-size="10" fill="#333333">${escapeXml(m.label)}</text></g>`,
    );
  }
  o.push('</svg>');
  return o.join('\n') + '\n';
}
