/** Clipping series to a view (nodes, GPUs, time window), min/avg/max, and chart downsampling. */
import type { MonitorTarget } from '../plan/monitor-schedule.js';
import type { Scope } from '../plan/monitor-config.js';
import type { Series } from './ingest.js';

export interface Clipped {
  s: Series;
  /** index range [lo, hi) of the points inside the window */
  lo: number;
  hi: number;
}

export interface Stats {
  n: number;
  min: number;
  avg: number;
  max: number;
}

/** First index with t[i] >= x. */
export function lowerBound(t: Float64Array, x: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface ViewSelection {
  /** actual host name → the GPU subset of the view on that host */
  hosts: Map<string, MonitorTarget['gpus']>;
  scopes: Scope[];
  t0: number;
  t1: number;
}

/**
 * The series of a view. A GPU subset that matches none of the node's GPU indices falls back to
 * every GPU of the node (rather than an empty chart); `none` drops GPU data.
 */
export function selectSeries(all: Series[], sel: ViewSelection): Clipped[] {
  const out: Clipped[] = [];
  const gpuIdsByHost = new Map<string, Set<string>>();
  for (const s of all)
    if (s.type === 'gpu') {
      let set = gpuIdsByHost.get(s.host);
      if (!set) gpuIdsByHost.set(s.host, (set = new Set()));
      set.add(s.rid);
    }
  for (const s of all) {
    const g = sel.hosts.get(s.host);
    if (g === undefined || !sel.scopes.includes(s.type)) continue;
    if (s.type === 'gpu') {
      if (g === 'none') continue;
      if (Array.isArray(g)) {
        const present = gpuIdsByHost.get(s.host) ?? new Set();
        const matched = g.some((i) => present.has(String(i)));
        if (matched && !g.includes(Number(s.rid))) continue;
      }
    }
    const lo = lowerBound(s.t, sel.t0);
    const hi = lowerBound(s.t, sel.t1 + 0.5);
    if (hi > lo) out.push({ s, lo, hi });
  }
  return out;
}

export function statsOf(list: Clipped[]): Stats {
  let n = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const { s, lo, hi } of list)
    for (let i = lo; i < hi; i++) {
      const v = s.v[i];
      n++;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
  return { n, min, avg: n ? sum / n : NaN, max };
}

/**
 * Mean per time bucket over one or more series (several: a node-level scope averaged over
 * nodes). Returns [bucket centre time, value] pairs for buckets that have data.
 */
export function bucketMeans(
  list: Clipped[],
  t0: number,
  t1: number,
  buckets: number,
): Array<[number, number]> {
  const span = Math.max(1, t1 - t0);
  const sum = new Float64Array(buckets);
  const cnt = new Uint32Array(buckets);
  for (const { s, lo, hi } of list)
    for (let i = lo; i < hi; i++) {
      const b = Math.min(buckets - 1, Math.max(0, Math.floor(((s.t[i] - t0) / span) * buckets)));
      sum[b] += s.v[i];
      cnt[b]++;
    }
  const out: Array<[number, number]> = [];
  for (let b = 0; b < buckets; b++)
    if (cnt[b]) out.push([t0 + ((b + 0.5) / buckets) * span, sum[b] / cnt[b]]);
  return out;
}
