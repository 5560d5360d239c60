/** The whole (list-form) recipe (config §1.2) and the checks that span sections. */
import * as z from 'zod';
import { didYouMean } from '../errors.js';
import { ArtifactSchema } from './artifact.js';
import { BackendSchema } from './backends.js';
import { atom, describe, fail } from './common.js';
import { list, strictObject } from './shapes.js';
import { toSchemaIssues } from './issues.js';
import { OPERATOR_SCHEMAS, OperatorSchema, isOperatorType } from './operators.js';
import { StorageSchema } from './uploads.js';
import { VariablesSchema } from './variable.js';
import { WorkflowSchema, type Workflow } from './workflow.js';

type Ctx = Parameters<typeof fail>[0];
type Named = { name: string };

const VersionSchema = atom<'0.1'>({ type: 'string', const: '0.1' }, (v) => {
  if (v === '0.1') return undefined;
  if (typeof v === 'number')
    return {
      message: `'version' must be the string "0.1", got ${describe(v)}`,
      hint: 'quote it: version: "0.1" (an unquoted 0.1 is read as a number)',
    };
  return {
    message: `'version' must be the string "0.1", got ${describe(v)}`,
    hint: 'it is the schema version, not the sflow release; "0.1" is the only accepted value (or omit the key)',
  };
});

const TOP_KEY_HINTS = {
  tasks: "tasks live under 'workflow: {name, tasks}'",
  monitor: "the workflow monitor lives under 'workflow.monitor'",
  name: "the workflow name lives under 'workflow.name'",
};

function duplicates(items: readonly Named[] | undefined, section: string, what: string, ctx: Ctx): void {
  const seen = new Set<string>();
  items?.forEach((it, i) => {
    if (seen.has(it.name)) fail(ctx, [section, i, 'name'], `Duplicate ${what} names found: ${it.name}`);
    seen.add(it.name);
  });
}

/** Merges a task-level override onto a named operator (extra_args appended, nulls ignored). */
export function mergeOperatorOverride(
  base: Record<string, unknown>,
  override: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(override)) {
    if (k === 'name' || v === null || v === undefined) continue;
    const before = base.extra_args;
    if (k === 'extra_args' && Array.isArray(v) && Array.isArray(before))
      merged.extra_args = [before, v].flat();
    else merged[k] = v;
  }
  return merged;
}

function checkOverrides(r: { operators?: Record<string, unknown>[]; workflow: Workflow }, ctx: Ctx): void {
  const byName = new Map((r.operators ?? []).map((o) => [o.name as string, o]));
  r.workflow.tasks.forEach((t, i) => {
    if (typeof t.operator !== 'object' || t.operator === null) return;
    const base = byName.get(t.operator.name);
    if (!base) return; // unknown operator names are reported at plan
    const at = ['workflow', 'tasks', i, 'operator'];
    const override = t.operator;
    if ('type' in override && override.type !== base.type) {
      fail(
        ctx,
        [...at, 'type'],
        `task '${t.name}' operator override cannot change 'type' of operator '${base.name}'`,
      );
      return;
    }
    const merged = mergeOperatorOverride(base, override);
    if (!isOperatorType(base.type)) return; // an unknown type is reported on the operator itself
    const schema = OPERATOR_SCHEMAS[base.type];
    const res = schema.safeParse(merged, { reportInput: true });
    if (res.success) return;
    for (const iss of toSchemaIssues(res.error.issues)) {
      const key = iss.path[0];
      if (typeof key !== 'string' || !(key in override)) continue;
      fail(ctx, [...at, ...iss.path], `task '${t.name}' operator override: ${iss.message}`, iss.hint);
    }
  });
}

function checkStorageRefs(r: { storage?: Named[]; workflow: Workflow }, ctx: Ctx): void {
  const targets = new Set((r.storage ?? []).map((s) => s.name));
  const hint = (name: string) =>
    targets.size === 0
      ? "declare it under the top-level 'storage:' section"
      : (didYouMean(name, targets) ?? `declared targets: ${[...targets].join(', ')}`);
  r.workflow.tasks.forEach((t, i) =>
    t.uploads?.forEach((u, j) => {
      if (!targets.has(u.target))
        fail(
          ctx,
          ['workflow', 'tasks', i, 'uploads', j, 'target'],
          `Task '${t.name}' upload references unknown storage target '${u.target}'`,
          hint(u.target),
        );
    }),
  );
  const all = r.workflow.upload_all;
  if (all && !targets.has(all.target))
    fail(
      ctx,
      ['workflow', 'upload_all', 'target'],
      `workflow.upload_all references unknown storage target '${all.target}'`,
      hint(all.target),
    );
}

export const RecipeSchema = strictObject(
  'the top level of the recipe',
  {
    /** schema version; only "0.1" exists */
    version: VersionSchema.default('0.1'),
    variables: VariablesSchema.optional(),
    artifacts: list(ArtifactSchema, 'artifacts').optional(),
    backends: list(BackendSchema, 'backends').optional(),
    operators: list(OperatorSchema, 'operators').optional(),
    storage: list(StorageSchema, 'storage').optional(),
    workflow: WorkflowSchema,
  },
  TOP_KEY_HINTS,
).superRefine((r, ctx) => {
  const defaults = (r.backends ?? []).map((b, i) => [b, i] as const).filter(([b]) => b.default === true);
  if (defaults.length > 1)
    fail(
      ctx,
      ['backends', defaults[1][1], 'default'],
      `Multiple default backends found: ${defaults.map(([b]) => b.name).join(', ')}. Only one backend can be set as default.`,
    );
  duplicates(r.backends, 'backends', 'backend', ctx);
  duplicates(r.operators, 'operators', 'operator', ctx);
  duplicates(r.artifacts, 'artifacts', 'artifact', ctx);
  duplicates(r.storage, 'storage', 'storage target', ctx);
  checkStorageRefs(r, ctx);
  checkOverrides(r, ctx);
});

export type Recipe = z.output<typeof RecipeSchema>;
