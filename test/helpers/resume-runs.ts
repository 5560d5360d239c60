/**
 * Runs for the resume tests (test/integration/resume-run.test.ts, the browser test): a sweep whose
 * rows fail while a marker file exists, resumed once the markers are gone.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sflow, type CliResult } from './cli.js';

export const ROWS = [1, 2, 3, 4, 5, 6, 7, 8];
export const FAILING = [3, 6];

/** prep → bench (one row per ROW; a row fails while marks/fail_<ROW> exists) → collect */
export function sweepRecipe(extra = ''): string {
  return `version: "0.1"
variables:
  ROW:
    type: integer
    value: 1
    domain: [${ROWS.join(', ')}]
workflow:
  name: rsweep
  tasks:
    - name: prep
      script:
        - echo prep >> "$MARKS/runs.log"
    - name: bench
      depends_on: [prep]
      replicas:
        variables: [ROW]
        policy: parallel
      script:
        - echo "bench_\${ROW}" >> "$MARKS/runs.log"
        - |
          if [ -e "$MARKS/fail_\${ROW}" ]; then
            # fail only once sflow recorded prep and every other row COMPLETED, so fail-fast cancels none of them
            n=0
            while [ "$(grep -c '"type":"task_finished".*"status":"COMPLETED"' "$SFLOW_WORKFLOW_OUTPUT_DIR/events.jsonl")" -lt ${ROWS.length - FAILING.length + 1} ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
            echo "row \${ROW} fails"; exit 1
          fi
        - echo "tput: \${ROW}0.0"
      result:
        tput: 'tput: ([\\d.]+)'
    - name: collect
      depends_on: [bench]
      script:
        - echo collect${extra} >> "$MARKS/runs.log"
`;
}

/**
 * In `dir`: the sweep's first run (rows FAILING fail), then `sflow run --resume` once the markers
 * are gone. Returns both results and the run directory.
 */
export function resumedSweep(dir: string): { first: CliResult; resumed: CliResult; runDir: string } {
  const marks = join(dir, 'marks');
  mkdirSync(marks, { recursive: true });
  const recipe = join(dir, 'r.yaml');
  writeFileSync(recipe, sweepRecipe());
  const env = { MARKS: marks };
  for (const r of FAILING) writeFileSync(join(marks, `fail_${r}`), '');
  const first = sflow(['run', '-f', recipe], { cwd: dir, env, timeoutMs: 120_000 });
  for (const r of FAILING) rmSync(join(marks, `fail_${r}`), { force: true });
  const out = join(dir, 'sflow_output');
  const runDir = join(out, readdirSync(out).filter((d) => !d.startsWith('_'))[0]);
  const resumed = sflow(['run', '--resume', runDir], { cwd: dir, env, timeoutMs: 120_000 });
  return { first, resumed, runDir };
}
