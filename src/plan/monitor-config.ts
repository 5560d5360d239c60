/**
 * One validated `monitor:` block (workflow or task) with its defaults applied (monitor.md §2).
 * Pure; the schema (src/config/schema/monitor.ts) has already rejected bad values.
 */
import type { Monitor, WorkflowMonitor } from '../config/schema/monitor.js';

export const SCOPE_ORDER = ['gpu', 'cpu', 'memory', 'disk', 'network'] as const;
export type Scope = (typeof SCOPE_ORDER)[number];
export type ReportFormat = 'csv' | 'svg' | 'png';

export const DEFAULT_INTERVAL_MS = 5000;
export const DEFAULT_GPU_FIELDS = [
  'index',
  'utilization.gpu',
  'utilization.memory',
  'temperature.gpu',
  'temperature.memory',
  'power.draw',
  'clocks.sm',
  'clocks.mem',
  'memory.total',
  'memory.used',
];

export interface Marker {
  /** alternatives: a literal substring, or a regex after `re:` / `regex:` */
  patterns: string[];
  select: 'first' | 'last';
}

export interface WindowSpec {
  /** null: the task's own start */
  start: Marker | null;
  /** null: the task's own end */
  end: Marker | null;
}

export interface NodeSelector {
  indices?: number[];
  count?: number;
  exclude?: number[];
}

export interface MonitorSpec {
  /** concrete task owning the block; null for `workflow.monitor` */
  owner: string | null;
  intervalMs: number;
  /** active built-in scopes → sampling interval (ms) */
  scopes: Partial<Record<Scope, number>>;
  gpuFields: string[];
  custom: string[];
  report: { enabled: boolean; formats: ReportFormat[] };
  window: WindowSpec | null;
  /** task names (declared or concrete) whose resources this monitor follows */
  usedBy: string[];
  nodes: NodeSelector | null;
  gpus: { count?: number; indices?: number[] } | null;
}

/** a validated `monitor:` block as the schema hands it (a workflow's has no `window`) */
export type MonitorBlock = Monitor | WorkflowMonitor;
type MarkerInput = NonNullable<Monitor['window']>['start'];

function marker(m: MarkerInput | null | undefined, select: 'first' | 'last'): Marker | null {
  if (m === null || m === undefined) return null;
  if (typeof m === 'string') return { patterns: [m], select };
  const pats = Array.isArray(m.pattern) ? m.pattern.map(String) : [String(m.pattern)];
  return { patterns: pats, select: m.select === 'first' || m.select === 'last' ? m.select : select };
}

function ints(v: number | string | (number | string)[] | undefined | null): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  return (Array.isArray(v) ? v : [v]).map(Number);
}

/** Defaults of monitor.md §2: all built-ins when `scopes` is omitted or empty, report on, csv+svg. */
export function normalizeMonitor(raw: MonitorBlock | null | undefined, owner: string | null): MonitorSpec {
  const m: MonitorBlock = raw ?? {};
  const intervalMs = typeof m.interval === 'number' ? m.interval : DEFAULT_INTERVAL_MS;
  const scopes: Partial<Record<Scope, number>> = {};
  const s = m.scopes ?? {};
  const listed = SCOPE_ORDER.some((k) => k in s) || 'custom' in s;
  for (const k of SCOPE_ORDER) {
    if (listed && !(k in s)) continue;
    const cfg = s[k] ?? {};
    if (cfg.enabled === false) continue;
    scopes[k] = typeof cfg.interval === 'number' ? cfg.interval : intervalMs;
  }
  const f = s.gpu?.fields;
  const gpuFields =
    f === undefined
      ? DEFAULT_GPU_FIELDS
      : (typeof f === 'string' ? f.split(',') : f).map((x) => x.trim()).filter(Boolean);
  const r = m.report ?? {};
  const w = 'window' in m ? m.window : undefined;
  const res = m.resources ?? {};
  const nodes = res.nodes;
  const gpus = res.gpus;
  return {
    owner,
    intervalMs,
    scopes,
    gpuFields,
    custom: s.custom?.script ?? [],
    report: {
      enabled: r.enabled !== false,
      formats: Array.isArray(r.format) ? [...new Set(r.format)] : ['csv', 'svg'],
    },
    window: w ? { start: marker(w.start, 'first'), end: marker(w.end, 'last') } : null,
    usedBy: res.used_by_tasks ?? [],
    nodes: nodes
      ? {
          ...(nodes.indices !== undefined ? { indices: ints(nodes.indices) } : {}),
          ...(nodes.count !== undefined ? { count: Number(nodes.count) } : {}),
          ...(nodes.exclude !== undefined ? { exclude: ints(nodes.exclude) } : {}),
        }
      : null,
    gpus: gpus
      ? {
          ...(gpus.count !== undefined ? { count: Number(gpus.count) } : {}),
          ...(gpus.indices !== undefined ? { indices: ints(gpus.indices) } : {}),
        }
      : null,
  };
}

/** Nodes of an allocation picked by a `{indices | count | exclude}` selector (backend-relative). */
export function selectNodes<T>(all: T[], sel: NodeSelector | null): T[] {
  if (!sel) return all;
  const ex = new Set((sel.exclude ?? []).map((i) => (i < 0 ? all.length + i : i)));
  const pool = all.filter((_, i) => !ex.has(i));
  if (sel.indices) return sel.indices.map((i) => pool[i < 0 ? pool.length + i : i]).filter(Boolean);
  if (sel.count !== undefined) return pool.slice(0, sel.count);
  return pool;
}

export function describeMarker(m: Marker | null, boundary: string): string {
  if (!m) return `(${boundary})`;
  return `${m.patterns.map((p) => `'${p}'`).join(' | ')} (${m.select})`;
}
