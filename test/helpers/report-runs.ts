/** Runs for the report tests: spec examples and generated recipes through the built CLI. */
import { freePorts } from './free-ports.js';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED, sflow, type CliResult } from './cli.js';
import { onlyRunDir } from './run-dir.js';

export const EXAMPLES = join(SHARED, 'spec', 'examples');

/** Why spec-example tests skip (undefined: they run); SFLOW_REQUIRE_SHARED=1 makes it a failure. */
export function sharedSkipReason(): string | undefined {
  if (existsSync(join(EXAMPLES, '05_sweep.yaml'))) return undefined;
  const why = `${EXAMPLES} is absent (no ../shared next to the repository)`;
  if (process.env.SFLOW_REQUIRE_SHARED === '1') throw new Error(`SFLOW_REQUIRE_SHARED=1 but ${why}`);
  return why;
}

export interface RunResult extends CliResult {
  cwd: string;
  runDir: string;
}

/** `sflow run -f <files> <extra>` in a private temp dir (the caller removes `cwd`). */
export function runRecipe(files: string[], extra: string[] = [], timeoutMs = 120_000): RunResult {
  const cwd = mkdtempSync(join(tmpdir(), 'sflow-report-run-'));
  const r = sflow(['run', ...files.flatMap((f) => ['-f', f]), ...extra], { cwd, timeoutMs });
  let runDir = '';
  try {
    runDir = onlyRunDir(join(cwd, 'sflow_output'));
  } catch {
    /* no run dir */
  }
  return { ...r, cwd, runDir };
}

/** A recipe written into a fresh temp dir; returns its path. */
export function recipeFile(yaml: string): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-report-recipe-'));
  const f = join(d, 'recipe.yaml');
  writeFileSync(f, yaml);
  return f;
}

/** `n` replicas of one task, each printing a value that `result:` parses. */
export function manyTasksRecipe(n: number): string {
  return `version: "0.1"
workflow:
  name: many
  tasks:
    - name: t
      replicas:
        count: ${n}
      script:
        - echo "value: $SFLOW_REPLICA_INDEX"
      result:
        value: 'value: (\\d+)'
`;
}

/** Free TCP ports on 127.0.0.1 (bound, read and released). */
export { freePorts };

export function reportOf(runDir: string): string {
  return readFileSync(join(runDir, 'report.html'), 'utf8');
}

export const countOf = (s: string, needle: string): number => s.split(needle).length - 1;
