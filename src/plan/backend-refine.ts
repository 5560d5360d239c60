/**
 * The last phase of the plan: each backend type's own checks and additions over its placed tasks
 * (the registry's `refine`, e.g. Kubernetes merged pods). Errors are located at the task's
 * declaration in the recipe, like placement errors.
 */
import { SflowError } from '../util/sflow-error.js';
import { locate } from '../config/source.js';
import type { Draft } from './task-draft.js';
import type { BackendCatalog, PlannedBackend, PlannedTask } from './types.js';

export function refineForBackends(
  tasks: PlannedTask[],
  backends: PlannedBackend[],
  catalog: BackendCatalog,
  drafts: Draft[],
  warnings: string[],
  runId: string,
): void {
  for (const b of backends) {
    const refine = catalog(b.type)?.refine;
    if (!refine) continue;
    refine(
      { runId, backend: b, tasks: tasks.filter((t) => t.backend === b.name), all: tasks },
      {
        fail(task, field, code, message, hint) {
          const base = tasks.find((t) => t.name === task)?.base ?? task;
          const d = drafts.find((x) => x.base === base);
          throw new SflowError(code, message, {
            phase: 'plan',
            ...(hint ? { hint } : {}),
            ...(d ? { location: locate(d.where.doc, [...d.where.path, ...field]) } : {}),
          });
        },
        warn: (m) => warnings.push(m),
      },
    );
  }
}
