/**
 * After the run: raw samples → report folders and `sflow_monitor.log` (monitor.md §6–§10).
 * Pure file work: nothing here talks to nodes or the run engine.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { noReportsReason, type MonitorSchedule, type ReportView } from '../plan/monitor-schedule.js';
import { SCOPE_ORDER } from '../plan/monitor-config.js';
import { isoLocal, summaryCsv, summaryRows, writeTimelineCsv } from './csv.js';
import { ingestRaw, shiftHost, type Dataset } from './ingest.js';
import type { TaskEvent } from './markers.js';
import { renderMonitorLog } from './monitor-log.js';
import { estimateSkew, skewWarning } from './skew.js';
import { selectSeries, type ViewSelection } from './stats.js';
import { renderTimelineSvg } from './svg.js';
import { resolveWindow, type StampedLine } from './window.js';

export interface CollectorRecord {
  /** plan host key */
  host: string;
  /** the host name in the raw file names */
  name: string;
  nodeId: string;
  /** driver clock: collector started / asked to stop */
  start: number;
  stop: number;
  intervalMs: number;
}

export type Rasterizer = (svg: string) => Promise<Buffer>;

export interface BuildInput {
  runDir: string;
  workflow: string;
  runId: string;
  schedule: MonitorSchedule;
  collectors: CollectorRecord[];
  runStart: number;
  runEnd: number;
  events: TaskEvent[];
  /** first start → last end of each concrete task that ran */
  taskSpans: Map<string, { start: number; end: number }>;
  markerLines: (task: string) => { lines: StampedLine[]; searched: number };
  /** undefined: @resvg/resvg-js, loaded on demand; null: no PNG renderer */
  rasterize?: Rasterizer | null;
  /** tasks a resumed session took over from an earlier one (their reports are in that session's folder) */
  reused?: Set<string>;
}

export interface BuildResult {
  reports: string[];
  warnings: string[];
  files: number;
}

const PNG_HINT =
  'PNG charts skipped: the SVG rasteriser @resvg/resvg-js could not be loaded (npm install @resvg/resvg-js); CSV and SVG were written as usual';

async function defaultRasterizer(): Promise<Rasterizer | null> {
  try {
    const { renderPng } = await import('../visualize/render.js');
    await import('@resvg/resvg-js');
    return (svg) => renderPng(svg, { scale: 1.5 });
  } catch {
    return null;
  }
}

export async function buildMonitorReports(i: BuildInput): Promise<BuildResult> {
  const monDir = join(i.runDir, 'sflow_monitor');
  const ds = ingestRaw(join(monDir, 'raw'));
  const warnings: string[] = [];
  correctSkew(ds, i.collectors, warnings);
  const nameOf = new Map(i.collectors.map((c) => [c.host, c.name]));
  const reports: string[] = [];
  const windowsText: string[] = [];
  let files = 0;
  let rasterize: Rasterizer | null | undefined = i.rasterize;
  let hinted = false;
  /** writes the PNG of a chart; false when no rasteriser could be loaded */
  const png = async (svg: string, path: string): Promise<boolean> => {
    if (rasterize === undefined) rasterize = await defaultRasterizer();
    if (rasterize === null) {
      if (!hinted) warnings.push(PNG_HINT);
      hinted = true;
      return false;
    }
    writeFileSync(path, await rasterize(svg));
    return true;
  };

  for (const v of i.schedule.views) {
    const span = v.windowTask ? i.taskSpans.get(v.windowTask) : { start: i.runStart, end: i.runEnd };
    if (!span) {
      if (v.windowTask && i.reused?.has(v.windowTask))
        windowsText.push(`${v.path}: not in this session (task reused from an earlier session)`);
      else warnings.push(`report ${v.path} skipped: task '${v.windowTask}' never ran`);
      continue;
    }
    let t0 = span.start;
    let t1 = span.end;
    const dir = join(monDir, v.path);
    if (v.window && v.windowTask) {
      const { lines, searched } = i.markerLines(v.windowTask);
      const r = resolveWindow(lines, v.window, span.start, span.end, searched);
      const doc = {
        report: v.path,
        task: v.windowTask,
        log: `${v.windowTask}/${v.windowTask}.log`,
        window: v.window,
      };
      mkdirSync(dir, { recursive: true });
      if (r.status === 'unresolved') {
        const msg = `windowed report ${v.path} skipped: the ${r.missed} marker ${r.patterns.map((p) => `'${p}'`).join(' | ')} never matched in ${doc.log} (${r.searchedLines} lines searched); see ${v.path}window_not_found.json`;
        warnings.push(msg);
        windowsText.push(`${v.path}: UNRESOLVED (${r.missed} marker missed)`);
        writeFileSync(join(dir, 'window_not_found.json'), JSON.stringify({ ...doc, ...r }, null, 2) + '\n');
        continue;
      }
      t0 = r.t0;
      t1 = r.t1;
      writeFileSync(
        join(dir, 'window.json'),
        JSON.stringify({ ...doc, ...r, t0_iso: isoLocal(r.t0), t1_iso: isoLocal(r.t1) }, null, 2) + '\n',
      );
      windowsText.push(
        `${v.path}: ${isoLocal(t0)} → ${isoLocal(t1)} (${((t1 - t0) / 1000).toFixed(1)} s; start line ${r.start?.lineNo ?? '-'}, end line ${r.end?.lineNo ?? '-'})`,
      );
    } else
      windowsText.push(`${v.path}: ${isoLocal(t0)} → ${isoLocal(t1)} (${((t1 - t0) / 1000).toFixed(1)} s)`);
    const out = await writeView(i, ds, v, dir, { t0, t1 }, nameOf, png);
    files += out.written.length;
    reports.push(reportLine(v.path, out));
  }

  const allHosts = new Map(ds.hosts.map((h) => [h.host, 'all' as const]));
  const everything = selectSeries(ds.series, {
    hosts: allHosts,
    scopes: [...SCOPE_ORDER],
    t0: i.runStart,
    t1: i.runEnd,
  });
  const ivs = i.schedule.collectors.map((c) =>
    Object.entries(c.scopes)
      .map(([k, n]) => `${k} ${n} ms`)
      .join(', '),
  );
  const text = renderMonitorLog({
    workflow: i.workflow,
    runId: i.runId,
    t0: i.runStart,
    t1: i.runEnd,
    ds,
    all: everything,
    scopes: [...new Set(i.schedule.collectors.flatMap((c) => Object.keys(c.scopes)))].join(', ') || '(none)',
    interval: [...new Set(ivs)].join(' | ') || '-',
    windows: windowsText,
    reports,
    noReports: i.schedule.views.length ? 'no report window ran (see Warnings)' : noReportsReason(i.schedule),
    events: i.events,
    warnings: [...i.schedule.warnings, ...warnings],
  });
  writeFileSync(join(i.runDir, 'sflow_monitor.log'), text);
  return { reports, warnings, files: files + 1 };
}

function correctSkew(ds: Dataset, collectors: CollectorRecord[], warnings: string[]): void {
  for (const c of collectors) {
    const h = ds.hosts.find((x) => x.host === c.name && x.nodeId === c.nodeId);
    if (!h || !Number.isFinite(h.first)) continue;
    const e = estimateSkew({ start: c.start, stop: c.stop }, h, c.intervalMs);
    if (e.shift === 0) continue;
    shiftHost(ds, c.name, e.shift);
    warnings.push(skewWarning(c.name, e));
  }
}

/** What one report folder holds: the files written, and the planned ones that were not, with why. */
export interface ViewFiles {
  written: string[];
  skipped: string[];
}

/** `lifecycle/a/ (timeline.csv, summary.csv; not written: timeline.svg (no samples in the window))` */
export function reportLine(path: string, f: ViewFiles): string {
  const made = f.written.length ? f.written.join(', ') : 'no file';
  return `${path} (${made}${f.skipped.length ? `; not written: ${f.skipped.join('; ')}` : ''})`;
}

async function writeView(
  i: BuildInput,
  ds: Dataset,
  v: ReportView,
  dir: string,
  w: { t0: number; t1: number },
  nameOf: Map<string, string>,
  png: (svg: string, path: string) => Promise<boolean>,
): Promise<ViewFiles> {
  const hosts: ViewSelection['hosts'] = new Map();
  for (const t of v.targets) {
    const name = nameOf.get(t.host);
    if (name !== undefined) hosts.set(name, t.gpus);
  }
  const list = selectSeries(ds.series, { hosts, scopes: v.scopes, t0: w.t0, t1: w.t1 });
  const errors = ds.gpuErrors.filter((e) => hosts.has(e.host) && e.t >= w.t0 && e.t <= w.t1);
  mkdirSync(dir, { recursive: true });
  const out: ViewFiles = { written: [], skipped: [] };
  if (v.formats.includes('csv')) {
    writeTimelineCsv(join(dir, 'timeline.csv'), list, v.scopes.includes('gpu') ? errors : []);
    writeFileSync(join(dir, 'summary.csv'), summaryCsv(summaryRows(list)));
    out.written.push('timeline.csv', 'summary.csv');
  }
  const charts = (['svg', 'png'] as const).filter((f) => v.formats.includes(f));
  if (!charts.length) return out;
  const names = [...hosts.keys()].filter((h) => list.some((c) => c.s.host === h));
  const perNode = names.length > 1;
  for (const h of perNode ? names : [names[0]]) {
    const mine = perNode ? list.filter((c) => c.s.host === h) : list;
    const base = perNode ? `timeline.${h}` : 'timeline';
    const svg = renderTimelineSvg({
      title: `${i.workflow} — ${v.path.replace(/\/$/, '')}${h ? ` — ${h}` : ''}`,
      subtitle: `${isoLocal(w.t0)} → ${isoLocal(w.t1)} (${((w.t1 - w.t0) / 1000).toFixed(1)} s); ${v.note}`,
      t0: w.t0,
      t1: w.t1,
      series: mine,
      events: i.events,
    });
    if (!svg) {
      const why = mine.length ? 'no samples in the window to draw' : 'no samples in the window';
      out.skipped.push(`${charts.map((f) => `${base}.${f}`).join(', ')} (${why})`);
      continue;
    }
    if (v.formats.includes('svg')) {
      writeFileSync(join(dir, `${base}.svg`), svg);
      out.written.push(`${base}.svg`);
    }
    if (v.formats.includes('png')) {
      if (await png(svg, join(dir, `${base}.png`))) out.written.push(`${base}.png`);
      else out.skipped.push(`${base}.png (no PNG rasteriser: @resvg/resvg-js could not be loaded)`);
    }
  }
  return out;
}
