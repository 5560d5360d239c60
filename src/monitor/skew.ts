/**
 * Clock skew between a node and the driver (monitor.md §10), with no extra probing: the driver
 * knows when it started and stopped a node's collector; the node's first and last samples show the
 * same span on the node clock. With offset = node clock − driver clock and sampling interval I:
 *   first sample taken in [start, start + I + slack] → offset ∈ [first − start − I − slack, first − start]
 *   last sample taken in  [stop − I − slack, stop]   → offset ∈ [last − stop, last − stop + I + slack]
 * Only when the intersection excludes zero are the node's samples shifted (reporting only).
 */
export interface SkewEstimate {
  lo: number;
  hi: number;
  /** the shift applied to the node's sample times (ms); 0 = left alone */
  shift: number;
}

export function estimateSkew(
  span: { start: number; stop: number },
  samples: { first: number; last: number },
  intervalMs: number,
  slackMs = 1000,
): SkewEstimate {
  const w = intervalMs + slackMs;
  const lo = Math.max(samples.first - span.start - w, samples.last - span.stop);
  const hi = Math.min(samples.first - span.start, samples.last - span.stop + w);
  if (!(lo <= hi) || (lo <= 0 && hi >= 0)) return { lo, hi, shift: 0 };
  return { lo, hi, shift: -Math.round((lo + hi) / 2) };
}

export function skewWarning(node: string, e: SkewEstimate): string {
  const ahead = e.shift < 0;
  const [a, b] = ahead ? [e.lo, e.hi] : [-e.hi, -e.lo];
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return (
    `clock on '${node}' is ${ahead ? 'ahead of' : 'behind'} this host by ${s(a)}..${s(b)}s; monitor samples ` +
    `were shifted by ${e.shift >= 0 ? '+' : ''}${s(e.shift)}s for REPORTING only (raw logs under sflow_monitor/raw/ ` +
    `keep the node's own timestamps). Windows are accurate to about the sampling interval until the clocks are synced (NTP/chrony).`
  );
}
