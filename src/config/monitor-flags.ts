/**
 * `--enable-workflow-monitor` / `--enable-task-monitor` (monitor.md §3): add a default monitor
 * (all scopes, report on, csv + svg) where the recipe declares none. They only fill gaps: a
 * monitor written in the recipe is left exactly as it is. Task names are declared names (a
 * replicated task's monitor covers every replica).
 */
import { SflowError } from '../util/sflow-error.js';
import { didYouMean } from './errors.js';

export interface MonitorFlags {
  workflow?: boolean;
  /** each flag value: `a,b`, `"a b"`, or one name; the flag may repeat */
  tasks?: string[];
}

/** `['a,b', 'c d', 'e']` → `['a', 'b', 'c', 'd', 'e']` (duplicates dropped, order kept). */
export function parseTaskMonitorFlag(values: string[]): string[] {
  const out: string[] = [];
  for (const v of values)
    for (const name of v.split(/[\s,]+/)) if (name && !out.includes(name)) out.push(name);
  return out;
}

type Obj = Record<string, unknown>;

/** Mutates the validated recipe; returns the names of tasks that got a CLI monitor. */
export function applyMonitorFlags(recipe: Obj, flags: MonitorFlags): string[] {
  const wf = recipe.workflow as Obj;
  if (flags.workflow && (wf.monitor === undefined || wf.monitor === null)) wf.monitor = {};
  const names = parseTaskMonitorFlag(flags.tasks ?? []);
  const tasks = (wf.tasks as Obj[] | undefined) ?? [];
  const known = tasks.map((t) => String(t.name));
  const added: string[] = [];
  for (const name of names) {
    const t = tasks.find((x) => x.name === name);
    if (!t) {
      const near = didYouMean(name, known);
      throw new SflowError(
        'cli.unknown_monitor_task',
        `--enable-task-monitor: unknown task '${name}'${near ? ` (${near})` : ''}`,
        { phase: 'usage', hint: `known tasks: ${known.join(', ') || '(none)'}` },
      );
    }
    if (t.monitor === undefined || t.monitor === null) {
      t.monitor = {};
      added.push(name);
    }
  }
  return added;
}
