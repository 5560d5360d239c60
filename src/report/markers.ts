/**
 * Task events as chart markers (the monitor charts): a start, readiness, or end of an attempt is
 * a vertical rule with a label. Events closer together than 1.5 % of the run are merged into one
 * marker (`3 tasks start`, `bench_1 done +2 more`), so a sweep's rows do not paint the chart solid.
 */
import type { ReportModel } from './model.js';

/** start and ready: dotted; done, fail, cancel: solid */
export type MarkerKind = 'start' | 'ready' | 'done' | 'fail' | 'cancel';

/** [epoch seconds, kind, label] */
export type Marker = [number, MarkerKind, string];

const END: Record<string, MarkerKind> = {
  COMPLETED: 'done',
  FAILED: 'fail',
  CANCELLED: 'cancel',
  RETRIED: 'fail',
};

export function eventMarkers(m: ReportModel, max = 80): Marker[] {
  const raw: Array<{ t: number; kind: MarkerKind; task: string }> = [];
  for (const t of m.tasks) {
    for (const a of t.attempts) {
      if (a.started !== undefined) raw.push({ t: a.started, kind: 'start', task: t.name });
      if (a.ready !== undefined) raw.push({ t: a.ready, kind: 'ready', task: t.name });
      const end = END[a.outcome];
      if (end && a.ended !== undefined) raw.push({ t: a.ended, kind: end, task: t.name });
    }
  }
  raw.sort((p, q) => p.t - q.t);
  if (!raw.length) return [];
  const window = Math.max(1, (raw[raw.length - 1].t - raw[0].t) * 0.015);
  const out: Marker[] = [];
  for (let i = 0; i < raw.length;) {
    const first = raw[i];
    let j = i + 1;
    while (j < raw.length && raw[j].t - first.t <= window) j++;
    const group = raw.slice(i, j);
    const kinds = new Set(group.map((g) => g.kind));
    const kind: MarkerKind = kinds.has('fail') ? 'fail' : first.kind;
    const label =
      group.length === 1
        ? `${first.task} ${first.kind}`
        : kinds.size === 1
          ? `${group.length} tasks ${first.kind}`
          : `${first.task} ${first.kind} +${group.length - 1} more`;
    out.push([Number((first.t / 1000).toFixed(3)), kind, label]);
    i = j;
  }
  if (out.length <= max) return out;
  const step = out.length / max;
  return Array.from({ length: max }, (_, k) => out[Math.floor(k * step)]);
}
