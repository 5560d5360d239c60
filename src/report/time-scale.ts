/**
 * The timeline's time → x mapping. Linear over the run, except that the idle time between two
 * sessions of a resumed run (the first run ended, `sflow run --resume` came hours later) is drawn
 * as a narrow break instead of stretching the plot, when it is more than a tenth of the span.
 */
import type { ReportModel } from './model.js';

const BREAK_PX = 18;

export interface TimeScale {
  x: (t: number) => number;
  /** collapsed gaps: where they are drawn and how long they were */
  breaks: Array<{ x: number; ms: number }>;
  /** is `t` inside a collapsed gap (no axis tick there) */
  hidden: (t: number) => boolean;
  /** running time shown (the span without the collapsed gaps), ms */
  shownMs: number;
}

export function timeScale(m: ReportModel, t0: number, t1: number, left: number, width: number): TimeScale {
  const span = Math.max(1, t1 - t0);
  const gaps: Array<[number, number]> = [];
  m.sessions.forEach((s, i) => {
    const next = m.sessions[i + 1];
    if (!next || s.endedAt === undefined) return;
    const [a, b] = [Math.max(t0, s.endedAt), Math.min(t1, next.startedAt)];
    if (b - a > span / 10) gaps.push([a, b]);
  });
  const hiddenMs = gaps.reduce((n, [a, b]) => n + (b - a), 0);
  const shownMs = Math.max(1, span - hiddenMs);
  const perMs = (width - gaps.length * BREAK_PX) / shownMs;
  const breaks: TimeScale['breaks'] = [];
  const x = (t: number): number => {
    let px = left;
    let from = t0;
    for (const [a, b] of gaps) {
      if (t <= a) break;
      px += (a - from) * perMs;
      if (t < b) return px + ((t - a) / (b - a)) * BREAK_PX;
      px += BREAK_PX;
      from = b;
    }
    return px + (t - from) * perMs;
  };
  for (const [a, b] of gaps) breaks.push({ x: x(a), ms: b - a });
  return { x, breaks, hidden: (t) => gaps.some(([a, b]) => t > a && t < b), shownMs };
}
