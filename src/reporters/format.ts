/** Time and duration formatting shared by the reporters. */
import { displayWidth, padEndDisplay } from '../util/display-width.js';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `2026-05-22 12:31:32,123` (local time) — the Python logging timestamp. */
export function logTimestamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(
    d.getSeconds(),
  )},${pad(d.getMilliseconds(), 3)}`;
}

/** ISO-8601 local time with offset: `2026-05-22T12:31:32.123+02:00`. */
export function isoLocal(ms: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(
    d.getSeconds(),
  )}.${pad(d.getMilliseconds(), 3)}${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** `12:31:33` local clock time. */
export function clock(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `9.017s` */
export function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(3)}s`;
}

/** Console durations: `0.4s`, `12.3s`, `2m05s`, `1h02m`. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${pad(Math.floor(s % 60))}s`;
  return `${Math.floor(m / 60)}h${pad(m % 60)}m`;
}

/** `+01.001s` elapsed since the start, as in the Timeline section. */
export function elapsed(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `+${s.toFixed(3).padStart(6, '0')}s`;
  const m = Math.floor(s / 60);
  return `+${m}m${(s - m * 60).toFixed(3).padStart(6, '0')}s`;
}

/** Python's `str(timedelta)`: `0:00:09.017000`. */
export function timedelta(ms: number): string {
  const total = Math.max(0, ms);
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = Math.floor((total % 60_000) / 1000);
  const us = Math.round((total % 1000) * 1000);
  return `${h}:${pad(m)}:${pad(s)}${us ? '.' + pad(us, 6) : ''}`;
}

/** Left-aligned columns (by display width: a CJK character takes two); every row the same number of cells. */
export function table(rows: string[][], gap = '  '): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, displayWidth(c))));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : padEndDisplay(c, widths[i])))
      .join(gap)
      .trimEnd(),
  );
}
