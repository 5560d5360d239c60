/**
 * Per-tool figures for the summary's "External Command Health" section, computed from the
 * trace rows bounded-exec emits.
 */

import type { ExternalCallTrace } from './bounded-exec.js';

export interface ToolHealth {
  tool: string;
  calls: number;
  failed: number;
  timedOut: number;
  slow: number;
  /** calls that needed more than one attempt */
  retried: number;
  totalMs: number;
  maxMs: number;
  /** nearest-rank 95th percentile of call durations */
  p95Ms: number;
}

export function summarizeExternalCalls(rows: readonly ExternalCallTrace[]): ToolHealth[] {
  const by = new Map<string, ExternalCallTrace[]>();
  for (const r of rows) {
    const list = by.get(r.tool);
    if (list) list.push(r);
    else by.set(r.tool, [r]);
  }
  const out: ToolHealth[] = [];
  for (const [tool, list] of by) {
    const durations = list.map((r) => r.durationMs).sort((a, b) => a - b);
    const rank = Math.max(0, Math.ceil(0.95 * durations.length) - 1);
    out.push({
      tool,
      calls: list.length,
      failed: list.filter((r) => !r.ok).length,
      timedOut: list.filter((r) => r.timedOut).length,
      slow: list.filter((r) => r.slow).length,
      retried: list.filter((r) => r.attempts > 1).length,
      totalMs: durations.reduce((a, b) => a + b, 0),
      maxMs: durations[durations.length - 1] ?? 0,
      p95Ms: durations[rank] ?? 0,
    });
  }
  return out.sort((a, b) => a.tool.localeCompare(b.tool));
}
