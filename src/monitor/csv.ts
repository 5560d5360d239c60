/**
 * Report CSVs (layouts: monitor.md §8.2, docs/monitor.md). `timeline.csv` is long format, one
 * row per sample and metric, grouped by node, scope, resource and metric and chronological within
 * each group; GPU collection errors are rows with metric `gpu_error` and the message in
 * `metric_text`. `summary.csv` has one row per scope and metric over the whole view.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { GpuError } from './ingest.js';
import { statsOf, type Clipped } from './stats.js';

export const TIMELINE_HEADER =
  'timestamp,timestamp_iso,node_id,hostname,resource_type,resource_id,metric_name,metric_value,metric_unit,metric_text,source_log';
export const SUMMARY_HEADER =
  'resource_type,metric_name,metric_unit,datapoints,min_value,avg_value,max_value';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Local time `YYYY-MM-DD HH:MM:SS.mmm`. */
export function isoLocal(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function num(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e6) / 1e6);
}

/** Streams the timeline to `path` in ~1 MiB writes. */
export function writeTimelineCsv(path: string, list: Clipped[], errors: GpuError[]): number {
  const fd = openSync(path, 'w');
  let buf: string[] = [TIMELINE_HEADER + '\n'];
  let size = 0;
  let rows = 0;
  // the ISO text of one second is reused for every row of that second
  let lastSec = NaN;
  let lastIso = '';
  const iso = (ms: number) => {
    const sec = Math.floor(ms / 1000);
    if (sec !== lastSec) {
      lastSec = sec;
      lastIso = isoLocal(sec * 1000).slice(0, 19);
    }
    return `${lastIso}.${pad(ms - sec * 1000, 3)}`;
  };
  const flush = () => {
    writeSync(fd, buf.join(''));
    buf = [];
    size = 0;
  };
  try {
    for (const { s, lo, hi } of list) {
      const mid = `,${csvField(s.nodeId)},${csvField(s.host)},${s.type},${csvField(s.rid)},${s.metric},`;
      const tail = `,${csvField(s.unit)},,${csvField(s.source)}\n`;
      for (let i = lo; i < hi; i++) {
        const t = s.t[i];
        const line = `${(t / 1000).toFixed(3)},${iso(t)}${mid}${num(s.v[i])}${tail}`;
        buf.push(line);
        size += line.length;
        rows++;
        if (size > 1 << 20) flush();
      }
    }
    for (const e of errors) {
      buf.push(
        `${(e.t / 1000).toFixed(3)},${isoLocal(e.t)},${csvField(e.nodeId)},${csvField(e.host)},gpu,,gpu_error,,,${csvField(e.message)},gpu_monitor_node_${e.nodeId}_${e.host}.log\n`,
      );
      rows++;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return rows;
}

export interface SummaryRow {
  type: string;
  metric: string;
  unit: string;
  n: number;
  min: number;
  avg: number;
  max: number;
}

export function summaryRows(list: Clipped[]): SummaryRow[] {
  const by = new Map<string, Clipped[]>();
  for (const c of list) {
    const k = `${c.s.type}\u0000${c.s.metric}\u0000${c.s.unit}`;
    by.set(k, [...(by.get(k) ?? []), c]);
  }
  return [...by.entries()].map(([k, cs]) => {
    const [type, metric, unit] = k.split('\u0000');
    return { type, metric, unit, ...statsOf(cs) };
  });
}

export function summaryCsv(rows: SummaryRow[]): string {
  const r = (v: number) => String(Math.round(v * 1000) / 1000);
  return (
    [
      SUMMARY_HEADER,
      ...rows.map(
        (x) => `${x.type},${x.metric},${csvField(x.unit)},${x.n},${r(x.min)},${r(x.avg)},${r(x.max)}`,
      ),
    ].join('\n') + '\n'
  );
}
