/**
 * A query's answer as an aligned text table (for a terminal: every cell's control characters
 * escaped, since the values come from run folders), CSV (RFC 4180) or JSON (an array of objects).
 */
import { escapeControls } from '../util/ansi.js';
import type { QueryResult } from './engine.js';
import type { Cell } from './row.js';

export type OutputFormat = 'table' | 'csv' | 'json';

function text(v: Cell): string {
  if (v === null) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e6) / 1e6);
  return String(v);
}

const MAX_CELL = 60;

export function asTable(r: QueryResult): string {
  const cells = r.rows.map((row) =>
    row.map((v) => {
      const t = escapeControls(text(v));
      return t.length > MAX_CELL ? `${t.slice(0, MAX_CELL - 1)}…` : t;
    }),
  );
  const head = r.columns.map((c) => escapeControls(c));
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)));
  const numeric = r.columns.map((_, i) =>
    r.rows.every((row) => row[i] === null || typeof row[i] === 'number'),
  );
  const line = (row: string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const out = [line(head), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(line)];
  out.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return out.join('\n') + '\n';
}

function csvField(v: Cell): string {
  const t = text(v);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

export function asCsv(r: QueryResult): string {
  return (
    [r.columns.map(csvField), ...r.rows.map((row) => row.map(csvField))].map((l) => l.join(',')).join('\n') +
    '\n'
  );
}

export function asJson(r: QueryResult): string {
  const objs = r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i]])));
  return JSON.stringify(objs, null, 1) + '\n';
}

export function formatResult(r: QueryResult, f: OutputFormat): string {
  return f === 'csv' ? asCsv(r) : f === 'json' ? asJson(r) : asTable(r);
}
