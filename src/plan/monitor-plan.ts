/**
 * Which monitor report folders a run will write (spec monitor.md §6.1, §7): pure, from the plan.
 * `--dry-run` prints them with their group and, for marker windows, the patterns; it also lists
 * the planned collectors (one per physical node).
 */
import { monitorSchedule, noReportsReason } from './monitor-schedule.js';
import type { Plan, PlannedTask } from './types.js';

export interface PlannedReport {
  /** relative to `sflow_monitor/` */
  path: string;
  group: 'lifecycle' | 'windowed';
  note: string;
}

export function plannedReports(
  tasks: PlannedTask[],
  workflowMonitor: Plan['workflowMonitor'],
  backends: Plan['backends'] = [],
): PlannedReport[] {
  return monitorSchedule({ tasks, workflowMonitor, backends }).views.map((v) => ({
    path: v.path,
    group: v.group,
    note: v.note,
  }));
}

/** The dry-run section: report folders tagged with their group, collectors, skip warnings. */
export function renderMonitorPlan(plan: Pick<Plan, 'tasks' | 'backends' | 'workflowMonitor'>): string[] {
  const s = monitorSchedule(plan);
  if (s.monitors.length === 0 && s.warnings.length === 0) return [];
  const out: string[] = [];
  if (s.collectors.length) {
    out.push('Monitor collectors (planned, one per node, for the whole run):');
    for (const c of s.collectors) {
      const scopes = Object.entries(c.scopes).map(([k, v]) => `${k}@${v}ms`);
      out.push(
        `  ${c.host} (backend ${c.backend}): ${scopes.join(', ') || 'no built-in scope'}${c.custom.length ? `, ${c.custom.length} custom command(s)` : ''}`,
      );
    }
  }
  out.push('Monitor reports (planned, under sflow_monitor/):');
  if (s.views.length === 0)
    out.push(
      s.monitors.length
        ? `  (none: ${noReportsReason(s)}; raw/ and sflow_monitor.log only)`
        : `  (none: ${noReportsReason(s)})`,
    );
  for (const r of s.views) out.push(`  [${r.group}] ${r.path}  (${r.note}; ${r.formats.join(', ')})`);
  for (const w of s.warnings) out.push(`  ⚠ ${w}`);
  out.push('');
  return out;
}
