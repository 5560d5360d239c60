/**
 * Reads the collectors' raw files (`sflow_monitor/raw/<scope>_monitor_node_<id>_<host>.log`) into
 * time series: one per node × resource × metric, times in epoch ms (node clock), sorted.
 * Non-numeric values (`[N/A]`) are skipped; `ts,ERROR,<message>` rows become GPU errors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scope } from '../plan/monitor-config.js';
import { NODE_COLUMNS, gpuMetric, type MetricDef } from './metrics.js';

export interface Series {
  nodeId: string;
  host: string;
  type: Scope;
  /** GPU index for gpu series, `/` for disk, '' otherwise */
  rid: string;
  metric: string;
  unit: string;
  source: string;
  t: Float64Array;
  v: Float64Array;
}

export interface GpuError {
  nodeId: string;
  host: string;
  t: number;
  message: string;
}

export interface HostData {
  nodeId: string;
  host: string;
  /** first and last sample time over all scopes (node clock, ms) */
  first: number;
  last: number;
  files: string[];
}

export interface Dataset {
  series: Series[];
  gpuErrors: GpuError[];
  hosts: HostData[];
  customLines: number;
}

export const RAW_NAME = /^(gpu|cpu|memory|disk|network|custom)_monitor_node_([^_]+)_(.+)\.log$/;

class Builder {
  private readonly map = new Map<string, { s: Omit<Series, 't' | 'v'>; t: number[]; v: number[] }>();
  add(base: Omit<Series, 't' | 'v' | 'metric' | 'unit'>, def: MetricDef, t: number, v: number): void {
    const key = `${base.nodeId}\u0000${base.host}\u0000${base.type}\u0000${base.rid}\u0000${def.metric}`;
    let e = this.map.get(key);
    if (!e) {
      e = { s: { ...base, metric: def.metric, unit: def.unit }, t: [], v: [] };
      this.map.set(key, e);
    }
    e.t.push(t);
    e.v.push(v);
  }
  build(): Series[] {
    return [...this.map.values()].map(({ s, t, v }) => {
      const order = isSorted(t) ? null : t.map((_, i) => i).sort((a, b) => t[a] - t[b]);
      return {
        ...s,
        t: Float64Array.from(order ? order.map((i) => t[i]) : t),
        v: Float64Array.from(order ? order.map((i) => v[i]) : v),
      };
    });
  }
}

function isSorted(a: number[]): boolean {
  for (let i = 1; i < a.length; i++) if (a[i] < a[i - 1]) return false;
  return true;
}

function forLines(text: string, fn: (line: string) => void): void {
  let i = 0;
  while (i < text.length) {
    let j = text.indexOf('\n', i);
    if (j < 0) j = text.length;
    if (j > i) fn(text.charCodeAt(j - 1) === 13 ? text.slice(i, j - 1) : text.slice(i, j));
    i = j + 1;
  }
}

/** Reads every raw file of `rawDir` (missing folder: an empty dataset). */
export function ingestRaw(rawDir: string): Dataset {
  let names: string[] = [];
  try {
    names = readdirSync(rawDir).sort();
  } catch {
    /* no raw data */
  }
  const b = new Builder();
  const gpuErrors: GpuError[] = [];
  const hosts = new Map<string, HostData>();
  let customLines = 0;
  for (const name of names) {
    const m = RAW_NAME.exec(name);
    if (!m) continue;
    const [, scope, nodeId, host] = m;
    const hk = `${nodeId}\u0000${host}`;
    let hd = hosts.get(hk);
    if (!hd) {
      hd = { nodeId, host, first: Infinity, last: -Infinity, files: [] };
      hosts.set(hk, hd);
    }
    hd.files.push(name);
    const text = readFileSync(join(rawDir, name), 'utf8');
    const seen = (t: number) => {
      if (t < hd.first) hd.first = t;
      if (t > hd.last) hd.last = t;
    };
    if (scope === 'custom') {
      forLines(text, () => customLines++);
      continue;
    }
    if (scope === 'gpu') {
      let defs: Array<MetricDef | null> = [];
      forLines(text, (line) => {
        if (line.startsWith('#fields=')) {
          const fields = line.slice(8).split(',');
          defs = fields.slice(1).map((f) => gpuMetric(f.trim()));
          return;
        }
        if (line.startsWith('#')) return;
        const cols = line.split(',');
        const t = Math.round(Number(cols[0]) * 1000);
        if (!Number.isFinite(t)) return;
        seen(t);
        if (cols[1] === 'ERROR') {
          gpuErrors.push({ nodeId, host, t, message: cols.slice(2).join(',').trim() });
          return;
        }
        const base = { nodeId, host, type: 'gpu' as const, rid: cols[1].trim(), source: name };
        for (let k = 0; k < defs.length; k++) {
          const d = defs[k];
          const v = Number(cols[k + 2]);
          if (d && cols[k + 2] !== '' && Number.isFinite(v)) b.add(base, d, t, v);
        }
      });
      continue;
    }
    const defs = NODE_COLUMNS[scope as Exclude<Scope, 'gpu'>];
    const rid = scope === 'disk' ? '/' : '';
    const base = { nodeId, host, type: scope as Scope, rid, source: name };
    forLines(text, (line) => {
      if (line.startsWith('#')) return;
      const cols = line.split(',');
      const t = Math.round(Number(cols[0]) * 1000);
      if (!Number.isFinite(t)) return;
      seen(t);
      for (let k = 0; k < defs.length; k++) {
        const d = defs[k];
        const v = Number(cols[k + 1]);
        if (d && cols[k + 1] !== '' && Number.isFinite(v)) b.add(base, d, t, v);
      }
    });
  }
  return { series: b.build(), gpuErrors, hosts: [...hosts.values()], customLines };
}

/** Shifts one host's samples by `ms` (clock-skew correction, reporting only). */
export function shiftHost(ds: Dataset, host: string, ms: number): void {
  if (ms === 0) return;
  for (const s of ds.series) if (s.host === host) for (let i = 0; i < s.t.length; i++) s.t[i] += ms;
  for (const e of ds.gpuErrors) if (e.host === host) e.t += ms;
  for (const h of ds.hosts)
    if (h.host === host) {
      h.first += ms;
      h.last += ms;
    }
}
