/**
 * What a run ran, kept in its run directory so `sflow run --resume` can run the rest of it and
 * tell when the recipe changed since: `sflow_recipe.yaml` (the composed recipe, with `-s`, `-a`,
 * `-M` and the monitor flags applied, as `sflow compose` writes it: it loads on its own) and
 * `sflow_run.json` (the command line's inputs, the folders, the resolved variables). Written
 * before the first task starts; a forced resume rewrites both with what it runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { writeJsonAtomicSync } from './json-write.js';
import { errorMessage } from '../util/errors.js';
import { writeFileSync, renameSync } from 'node:fs';

export const RUN_RECORD = 'sflow_run.json';
export const RECIPE_RECORD = 'sflow_recipe.yaml';
export const RUN_RECORD_SCHEMA = 'sflow.run.v1';

export interface RunInputs {
  /** recipe files as given (absolute) */
  files: string[];
  set: string[];
  artifact: string[];
  missable: string[];
  enableWorkflowMonitor: boolean;
  enableTaskMonitor: string[];
}

export interface RunRecord {
  schema_version: typeof RUN_RECORD_SCHEMA;
  run_id: string;
  workflow: string;
  sflow_version: string;
  created_at: string;
  /** where sflow was started: the tasks' working directory */
  cwd: string;
  workspace_dir: string;
  output_dir: string;
  inputs: RunInputs;
  recipe_file: typeof RECIPE_RECORD;
  /** every resolved variable: its value (Python str) and its sweep domain */
  variables: Record<string, { value: string; domain: string[] | null }>;
}

export function writeRunRecord(runDir: string, record: RunRecord, recipeText: string): void {
  const recipe = join(runDir, RECIPE_RECORD);
  const tmp = `${recipe}.${process.pid}.tmp`;
  writeFileSync(tmp, recipeText);
  renameSync(tmp, recipe);
  writeJsonAtomicSync(join(runDir, RUN_RECORD), record);
}

export interface RecordedRun {
  record: RunRecord;
  /** path of sflow_recipe.yaml */
  recipePath: string;
  recipeText: string;
}

/** The record of a run directory; undefined when the run predates it. Unreadable: a clear error. */
export function readRunRecord(runDir: string): RecordedRun | undefined {
  const path = join(runDir, RUN_RECORD);
  const recipePath = join(runDir, RECIPE_RECORD);
  if (!existsSync(path) || !existsSync(recipePath)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as RunRecord;
    if (record?.schema_version !== RUN_RECORD_SCHEMA)
      throw new Error(`unknown schema ${String(record?.schema_version)}`);
    return { record, recipePath, recipeText: readFileSync(recipePath, 'utf8') };
  } catch (e) {
    throw new SflowError('run.resume_record', `cannot read ${path}: ${errorMessage(e)}`, {
      phase: 'usage',
      hint: 'give the recipe again with -f (and --force, since it cannot be compared)',
    });
  }
}
