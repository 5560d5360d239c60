/**
 * The run record (src/outputs/run-record.ts) from what the CLI loaded and planned, and the
 * comparison `sflow run --resume` makes against it: the composed recipe (a line diff) and the
 * resolved variables (old → new, sweep domains included).
 */
import { resolve } from 'node:path';
import type { LoadedRecipe } from '../config/load.js';
import { applyMonitorFlags } from '../config/monitor-flags.js';
import type { Plan } from '../plan/types.js';
import { RECIPE_RECORD, RUN_RECORD_SCHEMA, type RunInputs, type RunRecord } from '../outputs/run-record.js';
import { lineDiff } from '../util/line-diff.js';
import { composeText } from './compose.js';
import {
  redactSecretVariables,
  redactSetArgs,
  SECRET_PLACEHOLDER,
  secretVariableNames,
} from '../config/secret-variables.js';
import { VERSION } from './version.js';

export function runInputs(files: string[], opts: Record<string, unknown>): RunInputs {
  const list = (k: string) => ((opts[k] as string[] | undefined) ?? []).map(String);
  return {
    files: files.map((f) => resolve(f)),
    set: list('set'),
    artifact: list('artifact'),
    missable: list('missableTasks'),
    enableWorkflowMonitor: Boolean(opts.enableWorkflowMonitor),
    enableTaskMonitor: list('enableTaskMonitor'),
  };
}

/**
 * The composed recipe as it ran: overrides and the monitor flags applied (loads on its own), the
 * values of secret variables replaced by a placeholder (src/config/secret-variables.ts).
 */
export function composedRecipeText(loaded: LoadedRecipe, inputs: RunInputs): string {
  const doc = redactSecretVariables(loaded.doc);
  applyMonitorFlags(doc, { workflow: inputs.enableWorkflowMonitor, tasks: inputs.enableTaskMonitor });
  return composeText(doc);
}

/** the recipe's secret variables (their values are never recorded) */
export function secretsOf(loaded: LoadedRecipe): Set<string> {
  return secretVariableNames(loaded.doc);
}

/** resolved variables; a secret one's value (and domain) is the placeholder */
export function variablesOf(plan: Plan, secret: Set<string> = new Set()): RunRecord['variables'] {
  const out: RunRecord['variables'] = {};
  for (const v of plan.variables)
    out[v.name] = secret.has(v.name)
      ? { value: SECRET_PLACEHOLDER, domain: v.domain ? v.domain.map(() => SECRET_PLACEHOLDER) : null }
      : { value: v.rendered, domain: v.domain };
  return out;
}

export function buildRunRecord(
  plan: Plan,
  inputs: RunInputs,
  o: { cwd: string; workspaceDir: string; secret?: Set<string> },
): RunRecord {
  const secret = o.secret ?? new Set<string>();
  return {
    schema_version: RUN_RECORD_SCHEMA,
    run_id: plan.runId,
    workflow: plan.workflow,
    sflow_version: VERSION,
    created_at: new Date().toISOString(),
    cwd: o.cwd,
    workspace_dir: resolve(o.workspaceDir),
    output_dir: plan.paths.outputDir,
    inputs: { ...inputs, set: redactSetArgs(inputs.set, secret) },
    recipe_file: RECIPE_RECORD,
    variables: variablesOf(plan, secret),
  };
}

/** What changed since the record: diff lines (empty: nothing). */
export function recordChanges(
  before: { recipeText: string; variables: RunRecord['variables'] },
  after: { recipeText: string; variables: RunRecord['variables'] },
): string[] {
  const out: string[] = [];
  const recipe = lineDiff(before.recipeText, after.recipeText);
  if (recipe.length) out.push(`recipe (${RECIPE_RECORD} → now):`, ...recipe.map((l) => `  ${l}`));
  const vars: string[] = [];
  const names = new Set([...Object.keys(before.variables), ...Object.keys(after.variables)]);
  for (const n of names) {
    const a = before.variables[n];
    const b = after.variables[n];
    if (!a) vars.push(`+ ${n} = ${b.value} (new)`);
    else if (!b) vars.push(`- ${n} = ${a.value} (gone)`);
    else {
      if (a.value !== b.value) vars.push(`~ ${n}: ${a.value} → ${b.value}`);
      const da = a.domain ? `[${a.domain.join(', ')}]` : 'none';
      const db = b.domain ? `[${b.domain.join(', ')}]` : 'none';
      if (da !== db) vars.push(`~ ${n} domain: ${da} → ${db}`);
    }
  }
  if (vars.length) out.push('resolved variables:', ...vars.map((l) => `  ${l}`));
  return out;
}
