/**
 * Raw collector columns → report metric names and units (monitor.md §8.2), and the display
 * scaling of byte quantities (GPU memory in GiB, rates in KiB/s…GiB/s).
 */
import type { Scope } from '../plan/monitor-config.js';

export interface MetricDef {
  metric: string;
  unit: string;
}

const GPU_FIELDS: Record<string, MetricDef> = {
  'utilization.gpu': { metric: 'gpu_utilization_pct', unit: '%' },
  'utilization.memory': { metric: 'gpu_memory_utilization_pct', unit: '%' },
  'temperature.gpu': { metric: 'gpu_temperature_c', unit: 'C' },
  'temperature.memory': { metric: 'gpu_memory_temperature_c', unit: 'C' },
  'power.draw': { metric: 'gpu_power_w', unit: 'W' },
  'clocks.sm': { metric: 'gpu_clocks_sm_mhz', unit: 'MHz' },
  'clocks.mem': { metric: 'gpu_clocks_mem_mhz', unit: 'MHz' },
  'memory.total': { metric: 'gpu_memory_total_mib', unit: 'MiB' },
  'memory.used': { metric: 'gpu_memory_used_mib', unit: 'MiB' },
};

export function gpuMetric(field: string): MetricDef {
  return GPU_FIELDS[field] ?? { metric: `gpu_${field.replace(/[^A-Za-z0-9]/g, '_')}`, unit: '' };
}

/** Columns after `ts` of the node-level raw files; `null` = not a metric (disk's mount point). */
export const NODE_COLUMNS: Record<Exclude<Scope, 'gpu'>, Array<MetricDef | null>> = {
  cpu: [
    { metric: 'cpu_utilization_pct', unit: '%' },
    { metric: 'load_1m', unit: 'load' },
    { metric: 'load_5m', unit: 'load' },
    { metric: 'load_15m', unit: 'load' },
  ],
  memory: [
    { metric: 'memory_total_kib', unit: 'KiB' },
    { metric: 'memory_available_kib', unit: 'KiB' },
    { metric: 'memory_used_kib', unit: 'KiB' },
    { metric: 'memory_used_pct', unit: '%' },
    { metric: 'swap_total_kib', unit: 'KiB' },
    { metric: 'swap_free_kib', unit: 'KiB' },
  ],
  disk: [
    null,
    { metric: 'disk_total_bytes', unit: 'bytes' },
    { metric: 'disk_used_bytes', unit: 'bytes' },
    { metric: 'disk_free_bytes', unit: 'bytes' },
    { metric: 'disk_used_pct', unit: '%' },
  ],
  network: [
    { metric: 'rx_bytes', unit: 'bytes' },
    { metric: 'tx_bytes', unit: 'bytes' },
    { metric: 'rx_bytes_per_s', unit: 'bytes/s' },
    { metric: 'tx_bytes_per_s', unit: 'bytes/s' },
    { metric: 'rx_packets_per_s', unit: 'packets/s' },
    { metric: 'tx_packets_per_s', unit: 'packets/s' },
  ],
};

export interface Scaled {
  factor: number;
  unit: string;
}

const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];

/** A display unit for values up to `max` in `unit` (bytes, KiB, MiB, bytes/s); others unchanged. */
export function scaleFor(unit: string, max: number): Scaled {
  const base: Record<string, [number, string]> = {
    bytes: [0, 'B'],
    KiB: [1, 'B'],
    MiB: [2, 'B'],
    'bytes/s': [0, 'B/s'],
  };
  const b = base[unit];
  if (!b) return { factor: 1, unit: unit === 'C' ? '°C' : unit };
  let step = b[0];
  let factor = 1;
  let m = Math.abs(max);
  while (m >= 1024 && step < BINARY.length - 1) {
    m /= 1024;
    factor /= 1024;
    step++;
  }
  return { factor, unit: `${BINARY[step]}${b[1]}` };
}

/** A number for tables and labels: 3 significant-ish digits, no exponent. */
export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return '-';
  const a = Math.abs(v);
  if (a >= 1000) return v.toFixed(0);
  if (a >= 100) return v.toFixed(1);
  return v.toFixed(a >= 10 || a === 0 ? 1 : 2);
}
