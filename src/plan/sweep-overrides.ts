/**
 * `--set NAME=[a,b]` turns NAME into a sweep domain, but only tasks that list NAME under
 * `replicas.variables` run once per value; every other reader sees the first value. A list
 * given for a variable no task sweeps would silently run one value only: it is refused at plan
 * time, naming the tasks that read the variable (the ones that would need `replicas.variables`).
 */
import type { SetOverride } from '../config/overrides.js';
import { SflowError } from '../util/sflow-error.js';

interface TaskView {
  name: string;
  /** swept variables of this instance */
  sweep: Readonly<Record<string, string>>;
}

interface DeclaredTask {
  name: string;
  script?: unknown;
}

export function checkSweepOverrides(
  overrides: readonly SetOverride[],
  planned: readonly TaskView[],
  declared: readonly DeclaredTask[],
): void {
  for (const o of overrides) {
    if (!o.isDomain) continue;
    if (planned.some((t) => Object.prototype.hasOwnProperty.call(t.sweep, o.key))) continue;
    const word = new RegExp(`\\b${o.key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
    const readers = declared
      .filter((t) => word.test(Array.isArray(t.script) ? t.script.join('\n') : String(t.script ?? '')))
      .map((t) => t.name);
    const values = Array.isArray(o.value) ? o.value : [];
    throw new SflowError(
      'plan.sweep_unused',
      `--set ${o.key}=${o.raw} gives a list (a sweep), but no task lists '${o.key}' under replicas.variables: ` +
        `the run would use only the first value${values.length ? ` (${JSON.stringify(values[0])})` : ''}`,
      {
        phase: 'plan',
        hint: readers.length
          ? `add 'replicas: {variables: [${o.key}]}' to the task that should run once per value (tasks reading ${o.key}: ${readers.join(', ')}), or pass a single value`
          : `add 'replicas: {variables: [${o.key}]}' to the task that should run once per value, or pass a single value`,
      },
    );
  }
}
