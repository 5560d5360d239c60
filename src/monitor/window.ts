/**
 * Report windows from log markers (monitor.md §7). A line's time is when sflow first read it from
 * the task's log (polled every 200 ms during the run, see MarkerTracker), so windows are accurate
 * to about that plus the sampling interval. Only the final attempt's lines count.
 */
import type { Marker, WindowSpec } from '../plan/monitor-config.js';
import { compilePattern, type CompiledPattern } from '../probes/pattern.js';

export interface StampedLine {
  /** ms since epoch (driver clock) */
  t: number;
  /** 1-based line number in the final attempt's part of the log */
  lineNo: number;
  text: string;
}

export interface MarkerHit {
  t: number;
  lineNo: number;
  line: string;
  /** how many lines matched this marker (start: all; end: after the selected start) */
  matches: number;
}

export type WindowResolution =
  | { status: 'resolved'; t0: number; t1: number; start: MarkerHit | null; end: MarkerHit | null }
  | { status: 'unresolved'; missed: 'start' | 'end'; patterns: string[]; searchedLines: number };

export function matcher(patterns: string[]): (line: string) => boolean {
  const compiled: CompiledPattern[] = patterns.map((p) => compilePattern(p));
  return (line) =>
    compiled.some((c) => {
      if (c.kind === 'literal') return line.includes(c.text);
      c.re.lastIndex = 0;
      return c.re.test(line);
    });
}

function pick(lines: StampedLine[], m: Marker): { hit: StampedLine; count: number } | undefined {
  const test = matcher(m.patterns);
  const hits = lines.filter((l) => test(l.text));
  if (!hits.length) return undefined;
  return { hit: m.select === 'first' ? hits[0] : hits[hits.length - 1], count: hits.length };
}

/**
 * Start first; end only among lines strictly after the selected start. A missing marker in the
 * spec means the task's own start or end.
 */
export function resolveWindow(
  lines: StampedLine[],
  w: WindowSpec,
  taskStart: number,
  taskEnd: number,
  searchedLines = lines.length,
): WindowResolution {
  let t0 = taskStart;
  let start: MarkerHit | null = null;
  let after = lines;
  if (w.start) {
    const p = pick(lines, w.start);
    if (!p) return { status: 'unresolved', missed: 'start', patterns: w.start.patterns, searchedLines };
    start = { t: p.hit.t, lineNo: p.hit.lineNo, line: p.hit.text, matches: p.count };
    t0 = p.hit.t;
    after = lines.filter((l) => l.lineNo > p.hit.lineNo);
  }
  let t1 = taskEnd;
  let end: MarkerHit | null = null;
  if (w.end) {
    const p = pick(after, w.end);
    if (!p) return { status: 'unresolved', missed: 'end', patterns: w.end.patterns, searchedLines };
    end = { t: p.hit.t, lineNo: p.hit.lineNo, line: p.hit.text, matches: p.count };
    t1 = p.hit.t;
  }
  return { status: 'resolved', t0, t1: Math.max(t0, t1), start, end };
}
