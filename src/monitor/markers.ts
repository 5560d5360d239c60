/**
 * Task-event markers on the charts (monitor.md §8.1): events that happen almost together are
 * merged into one rule whose label summarises them ("3 tasks submit +2 more"); a rule is dotted
 * for a start-type event (submit, ready) and solid for an end-type one (done, fail, cancel).
 */
import { eventTime, type RunEvent } from '../events/events.js';

export type EventKind = 'submit' | 'ready' | 'done' | 'fail' | 'cancel';

export interface TaskEvent {
  t: number;
  task: string;
  kind: EventKind;
}

export interface MarkerCluster {
  t: number;
  events: TaskEvent[];
  label: string;
  style: 'start' | 'end';
}

const ORDER: EventKind[] = ['submit', 'ready', 'done', 'fail', 'cancel'];
const START_KINDS = new Set<EventKind>(['submit', 'ready']);

/** The chart-worthy lifecycle transitions of a run's event stream. */
export function taskEventOf(e: RunEvent): TaskEvent | undefined {
  if (e.type === 'task_submitted') return { t: e.t, task: e.task, kind: 'submit' };
  if (e.type === 'task_ready') return { t: e.t, task: e.task, kind: 'ready' };
  if (e.type === 'task_finished') {
    const kind = e.status === 'COMPLETED' ? 'done' : e.status === 'FAILED' ? 'fail' : 'cancel';
    return { t: eventTime(e), task: e.task, kind };
  }
  return undefined;
}

export function clusterLabel(events: TaskEvent[]): { label: string; style: 'start' | 'end' } {
  const by = new Map<EventKind, TaskEvent[]>();
  for (const e of events) by.set(e.kind, [...(by.get(e.kind) ?? []), e]);
  let top: EventKind = events[0].kind;
  for (const k of ORDER) if ((by.get(k)?.length ?? 0) > (by.get(top)?.length ?? 0)) top = k;
  const main = by.get(top) ?? [];
  const head = main.length === 1 ? `${main[0].task} ${top}` : `${main.length} tasks ${top}`;
  const rest = events.length - main.length;
  return { label: rest > 0 ? `${head} +${rest} more` : head, style: START_KINDS.has(top) ? 'start' : 'end' };
}

/** Events inside [t0, t1], merged when closer than `mergeMs` to the first event of a cluster. */
export function clusterEvents(events: TaskEvent[], t0: number, t1: number, mergeMs: number): MarkerCluster[] {
  const inside = events.filter((e) => e.t >= t0 && e.t <= t1).sort((a, b) => a.t - b.t);
  const out: MarkerCluster[] = [];
  let cur: TaskEvent[] = [];
  const flush = () => {
    if (!cur.length) return;
    out.push({ t: cur[0].t, events: cur, ...clusterLabel(cur) });
    cur = [];
  };
  for (const e of inside) {
    if (cur.length && e.t - cur[0].t > mergeMs) flush();
    cur.push(e);
  }
  flush();
  return out;
}
