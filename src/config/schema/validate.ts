/** Entry points: validate a whole recipe, or one task-level operator override. */
import { didYouMean } from '../errors.js';
import { isPlainObject } from './common.js';
import { toSchemaIssues, type SchemaIssue, type SchemaPath } from './issues.js';
import { OPERATOR_SCHEMAS, OPERATOR_TYPES, type OperatorType } from './operators.js';
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
  if (!(OPERATOR_TYPES as readonly string[]).includes(type)) {
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
  const r = OPERATOR_SCHEMAS[type as OperatorType].safeParse(input, { reportInput: true });
  return r.success ? [] : toSchemaIssues(r.error.issues);
}
