/**
 * Which monitor report folders a run will write (spec monitor.md §6.1, §7): pure, from the plan.
 * `--dry-run` prints them with their group and, for marker windows, the patterns.
 */
import type { PlannedBackend, PlannedTask } from './types.js';

type Obj = Record<string, unknown>;

export interface PlannedReport {
  /** relative to `sflow_monitor/` */
  path: string;
  group: 'lifecycle' | 'windowed';
  note: string;
}

function reportEnabled(m: Obj | null | undefined): boolean {
  return !(m && (m.report as Obj | undefined)?.enabled === false);
}

function marker(m: unknown, defSelect: 'first' | 'last'): string {
  if (m === null || m === undefined) return '(task boundary)';
  if (typeof m === 'string') return `'${m}' (${defSelect})`;
  const o = m as Obj;
  const pats = Array.isArray(o.pattern)
    ? o.pattern.map((p: unknown) => `'${String(p)}'`).join(' | ')
    : `'${String(o.pattern)}'`;
  return `${pats} (${String(o.select ?? defSelect)})`;
}

export function plannedReports(
  tasks: PlannedTask[],
  workflowMonitor: unknown,
  backends: PlannedBackend[],
): PlannedReport[] {
  const out: PlannedReport[] = [];
  const seen = new Set<string>();
  const add = (r: PlannedReport): void => {
    if (seen.has(r.path)) return;
    seen.add(r.path);
    out.push(r);
  };
  const sampled = new Set(backends.filter((b) => b.capabilities.monitor).map((b) => b.name));
  const monitored = tasks.filter((t) => sampled.has(t.backend));
  const wm = workflowMonitor as Obj | null;
  if (wm && reportEnabled(wm)) {
    add({ path: 'lifecycle/workflow/', group: 'lifecycle', note: 'whole-pool aggregate' });
    for (const t of monitored)
      add({ path: `lifecycle/${t.name}/`, group: 'lifecycle', note: 'task lifecycle window' });
  }
  for (const t of monitored) {
    const m = t.monitor as Obj | null;
    if (!m || !reportEnabled(m)) continue;
    const users = ((m.resources as Obj | undefined)?.used_by_tasks as string[] | undefined) ?? [];
    if (users.length) {
      for (const b of users)
        add({
          path: `lifecycle/${b}__monitored_by__${t.name}/`,
          group: 'lifecycle',
          note: `${b}'s resources over ${t.name}'s run window`,
        });
    } else add({ path: `lifecycle/${t.name}/`, group: 'lifecycle', note: 'task lifecycle window' });
    if (m.window) {
      const w = m.window as Obj;
      add({
        path: `windowed/${t.name}/`,
        group: 'windowed',
        note: `log-marker window: start=${marker(w.start, 'first')}, end=${marker(w.end, 'last')}`,
      });
    }
  }
  return out;
}
