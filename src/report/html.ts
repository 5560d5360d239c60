/** Small HTML helpers for the report: escaping, time labels, status colours. */

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text and attribute values, escaped. */
const SPECIAL = /[&<>"']/;

export function esc(s: unknown): string {
  const text = typeof s === 'string' ? s : String(s ?? '');
  return SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => ESC[c]) : text;
}

/** Inside `<script>`: JSON that cannot close the script element. */
export function scriptJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** `+12.345s` relative to the run start. */
export function rel(t: number, t0: number): string {
  return `+${((t - t0) / 1000).toFixed(3)}s`;
}

/** `0.4 s`, `12.3 s`, `2 m 05 s`, `1 h 02 m`. */
export function dur(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} m`;
}

/** `2026-05-22 12:31:32` local time. */
export function stamp(ms: number): string {
  if (!ms) return '-';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A status chip: `<span class="st s-FAILED">FAILED</span>`. */
export function chip(status: string, text: string = status): string {
  return `<span class="st s-${esc(status)}">${esc(text)}</span>`;
}

/** A value from a result file, for a table cell. */
export function cellValue(v: unknown): string {
  if (v === undefined) return '';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  if (typeof v === 'string') return v;
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
}

/** Round step for an axis of `span` units with about `ticks` ticks (1, 2, 5 × 10^k). */
export function niceStep(span: number, ticks: number): number {
  const raw = Math.max(span, 1e-9) / Math.max(1, ticks);
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const f of [1, 2, 5, 10]) if (f * p >= raw) return f * p;
  return 10 * p;
}

/** Middle-truncates long names for labels (the full name goes into the tooltip). */
export function clip(s: string, max: number): string {
  return s.length <= max
    ? s
    : `${s.slice(0, Math.ceil(max / 2) - 1)}…${s.slice(s.length - Math.floor(max / 2))}`;
}
