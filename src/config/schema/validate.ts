/** Entry points: validate a whole recipe, or one task-level operator override. */
import { didYouMean } from '../errors.js';
import { isPlainObject } from './common.js';
import { toSchemaIssues, type SchemaIssue, type SchemaPath } from './issues.js';
import { OPERATOR_SCHEMAS, OPERATOR_TYPES, isOperatorType, type Operator } from './operators.js';
import { RecipeSchema, type Recipe } from './recipe.js';

export type ValidationResult =
  { ok: true; recipe: Recipe; warnings: SchemaIssue[] } | { ok: false; issues: SchemaIssue[] };

// workflow.timeout is enforced (src/runtime/deadline.ts); a task's timeout is not: the run warns
// about it (src/plan/not-yet.ts), so loading alone (compose) stays quiet
function warningsFor(recipe: Recipe): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const dupVars = (vars: { name: string }[] | undefined, base: SchemaPath) => {
    const seen = new Set<string>();
    vars?.forEach((v, i) => {
      if (seen.has(v.name))
        out.push({
          path: [...base, i, 'name'],
          message: `variable '${v.name}' is declared more than once; the last declaration wins`,
        });
      seen.add(v.name);
    });
  };
  dupVars(recipe.variables, ['variables']);
  dupVars(recipe.workflow.variables, ['workflow', 'variables']);
  return out;
}

/** Validates a parsed, list-form recipe. Never throws for user mistakes. */
export function validateRecipe(doc: unknown): ValidationResult {
  if (!isPlainObject(doc))
    return { ok: false, issues: [{ path: [], message: 'a recipe must be a YAML mapping at the top level' }] };
  const r = RecipeSchema.safeParse(doc, { reportInput: true });
  if (!r.success) return { ok: false, issues: toSchemaIssues(r.error.issues) };
  return { ok: true, recipe: r.data, warnings: warningsFor(r.data) };
}

/**
 * Strict check of a task-level operator override merged onto a named operator
 * (config §5.5). Paths are relative to the merged object.
 */
export function validateOperatorOverride(type: string, merged: unknown): SchemaIssue[] {
  if (!isOperatorType(type)) {
    const dym = didYouMean(type, OPERATOR_TYPES);
    return [
      {
        path: ['type'],
        message: `unknown operator type '${type}'`,
        hint: `${dym ? `${dym} ` : ''}valid operator types: ${OPERATOR_TYPES.join(', ')}`,
      },
    ];
  }
  const input = isPlainObject(merged) ? { ...merged, type } : merged;
  const r = OPERATOR_SCHEMAS[type].safeParse(input, { reportInput: true });
  return r.success ? [] : toSchemaIssues(r.error.issues);
}

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v.map((x: unknown) => x) : []);

/**
 * A named operator with a task's inline override merged in (config §5.5: `extra_args` appended,
 * other fields replaced, `name` and empty values ignored), checked against the named operator's
 * type: the parse boundary of task-level overrides. Paths of the issues are relative to the
 * override.
 */
export function overrideOperator(
  named: Operator,
  override: Record<string, unknown>,
): { ok: true; operator: Operator } | { ok: false; issues: SchemaIssue[] } {
  const merged: Record<string, unknown> = { ...named };
  for (const [k, v] of Object.entries(override)) {
    if (k === 'name' || v === null || v === undefined) continue;
    if (k === 'extra_args' && Array.isArray(v))
      merged.extra_args = [...listOf(merged.extra_args), ...listOf(v)];
    else merged[k] = v;
  }
  const issues = validateOperatorOverride(named.type, merged);
  // the merged entry passed the schema of its type (the named operator's): it is that operator type
  return issues.length ? { ok: false, issues } : { ok: true, operator: merged as Operator };
}
