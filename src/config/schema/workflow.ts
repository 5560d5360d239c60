/** `workflow` (config §1.9) and its cross-task checks. */
import * as z from 'zod';
import { didYouMean } from '../errors.js';
import { fail, str, strOrInt } from './common.js';
import { list, strictObject } from './shapes.js';
import { WorkflowMonitorSchema } from './monitor.js';
import { probeSourcePath } from './probes.js';
import { TaskSchema, type Task } from './task.js';
import { UploadAllSchema } from './uploads.js';
import { VariablesSchema } from './variable.js';

type Ctx = Parameters<typeof fail>[0];

function unknownTaskHint(name: string, names: Set<string>): string {
  const base = /^(.+)_\d+$/.exec(name)?.[1];
  if (base && names.has(base))
    return `use the base task name '${base}' (replica names cannot be referenced here)`;
  return didYouMean(name, names) ?? `declared tasks: ${[...names].join(', ')}`;
}

function checkTasks(tasks: Task[], ctx: Ctx): void {
  const names = new Set<string>();
  const dups: string[] = [];
  tasks.forEach((t, i) => {
    if (names.has(t.name)) {
      if (!dups.includes(t.name)) dups.push(t.name);
      fail(
        ctx,
        ['tasks', i, 'name'],
        `Duplicate task names found: ${t.name}`,
        'every task needs a unique name',
      );
    }
    names.add(t.name);
  });
  tasks.forEach((t, i) => {
    t.depends_on?.forEach((dep, j) => {
      if (!names.has(dep))
        fail(
          ctx,
          ['tasks', i, 'depends_on', j],
          `Task '${t.name}' depends on unknown task '${dep}'`,
          unknownTaskHint(dep, names),
        );
    });
    // (-M patterns already removed the absent targets they match: config/missable.ts)
    t.required_by?.forEach((target, j) => {
      if (!names.has(target))
        fail(
          ctx,
          ['tasks', i, 'required_by', j],
          `Task '${t.name}' is required_by unknown task '${target}'`,
          unknownTaskHint(target, names),
        );
    });
    for (const kind of ['readiness', 'failure'] as const) {
      const probes = t.probes?.[kind];
      probes?.forEach((p, k) => {
        const logger = p.log_watch?.logger;
        if (logger !== undefined && !names.has(logger))
          fail(
            ctx,
            ['tasks', i, 'probes', kind, ...probeSourcePath(probes, k), 'log_watch', 'logger'],
            `Task '${t.name}' ${kind} probe refers to unknown task '${logger}'`,
            unknownTaskHint(logger, names),
          );
      });
    }
    t.monitor?.resources?.used_by_tasks?.forEach((ref, j) => {
      if (!names.has(ref))
        fail(
          ctx,
          ['tasks', i, 'monitor', 'resources', 'used_by_tasks', j],
          `Task '${t.name}' monitor.resources.used_by_tasks refers to unknown task '${ref}'`,
          unknownTaskHint(ref, names),
        );
    });
  });
}

export const WorkflowSchema = strictObject('workflow', {
  /** not expression-resolved; used in run ids */
  name: str({ nonEmpty: true }),
  tasks: list(TaskSchema, 'tasks', true),
  variables: VariablesSchema.optional(),
  /** a deadline for the whole run (seconds, '2h', '1:30:00'): enforced, see src/runtime/deadline.ts */
  timeout: strOrInt().nullable().optional(),
  monitor: WorkflowMonitorSchema.optional(),
  /** zip the run directory and upload it after the run */
  upload_all: UploadAllSchema.optional(),
}).superRefine((w, ctx) => {
  checkTasks(w.tasks, ctx);
  const names = new Set(w.tasks.map((t) => t.name));
  w.monitor?.resources?.used_by_tasks?.forEach((ref, j) => {
    if (!names.has(ref))
      fail(
        ctx,
        ['monitor', 'resources', 'used_by_tasks', j],
        `workflow.monitor.resources.used_by_tasks refers to unknown task '${ref}'`,
        unknownTaskHint(ref, names),
      );
  });
});

export type Workflow = z.output<typeof WorkflowSchema>;
