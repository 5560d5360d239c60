/**
 * report.html after real runs (the built CLI, real processes): the spec's sweep and service
 * examples, a 1,000-task run, result assertions, and `sflow report` (rebuild and compare).
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';
import { taskTable } from '../helpers/run-dir.js';
import {
  EXAMPLES,
  countOf,
  freePorts,
  manyTasksRecipe,
  recipeFile,
  reportOf,
  runRecipe,
  sharedSkipReason,
  type RunResult,
} from '../helpers/report-runs.js';

const cleanup: string[] = [];
afterAll(() => cleanup.forEach((d) => rmSync(d, { recursive: true, force: true })));
function run(files: string[], extra: string[] = [], timeoutMs?: number): RunResult {
  const r = runRecipe(files, extra, timeoutMs);
  cleanup.push(r.cwd);
  return r;
}
function recipe(yaml: string): string {
  const f = recipeFile(yaml);
  cleanup.push(dirname(f));
  return f;
}

const skip = sharedSkipReason();

describe.skipIf(skip !== undefined)(`report of the spec examples${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('05 sweep: one bar per attempt, the sweep rows with their values, rebuilt by sflow report', () => {
    const r = run([join(EXAMPLES, '05_sweep.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Report: ${join(r.runDir, 'report.html')}`);
    const html = reportOf(r.runDir);
    expect(countOf(html, '<rect class="bar ')).toBe(8);
    expect(countOf(html, '<tr data-task="bench_')).toBe(6);
    expect(html).toMatch(
      /<td class="name">bench_8_slow<\/td><td data-v="3">3<\/td><td data-v="8">8<\/td><td>slow<\/td>/,
    );
    rmSync(join(r.runDir, 'report.html'));
    const again = sflow(['report', r.runDir]);
    expect(again.code, again.stderr).toBe(0);
    expect(countOf(reportOf(r.runDir), '<rect class="bar ')).toBe(8);
  });

  it('06 services: readiness markers and probe traces', async () => {
    const [site, api] = await freePorts(2);
    const r = run(
      [join(EXAMPLES, '06_service_readiness.yaml')],
      ['-s', `SITE_PORT=${site}`, '-s', `API_PORT=${api}`],
    );
    expect(r.code, r.stderr).toBe(0);
    const html = reportOf(r.runDir);
    expect(countOf(html, '<rect class="bar ')).toBe(3);
    expect(countOf(html, 'class="mk-ready"')).toBe(2);
    expect(html).toContain(`tcp_port 127.0.0.1:${site}`);
    expect(html).toMatch(/<svg class="dag"[\s\S]*data-task="client"/);
  });
});

describe('report of generated runs', () => {
  it('a 1,000-task run: 1,000 bars and result rows, under 2 MB', () => {
    const r = run([recipe(manyTasksRecipe(1000))], [], 300_000);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const html = reportOf(r.runDir);
    expect(countOf(html, '<rect class="bar ')).toBe(1000);
    expect(countOf(html, '<tr data-task="t_')).toBe(1000);
    expect(statSync(join(r.runDir, 'report.html')).size).toBeLessThan(2 * 1024 * 1024);
  }, 320_000);

  it('assertions: a false one fails the task with expression, values and file; a true one stays green', () => {
    const yaml = (cond: string) => `version: "0.1"
workflow:
  name: asserted
  tasks:
    - name: bench
      script:
        - echo "output_throughput: 0.0"
        - echo "errors: 0"
      result:
        output_throughput: 'output_throughput: ([\\d.]+)'
        errors: 'errors: (\\d+)'
      assert:
        - "\${{ result.errors == 0 }}"
        - "\${{ result.output_throughput ${cond} 0 }}"
    - name: after
      depends_on: [bench]
      script: [echo after]
`;
    const bad = run([recipe(yaml('>'))]);
    expect(bad.code).toBe(1);
    expect(taskTable(bad.runDir).bench.status).toBe('FAILED');
    expect(taskTable(bad.runDir).after.status).toBe('CANCELLED');
    const summary = readFileSync(join(bad.runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toContain(
      `assertion failed: \${{ result.output_throughput > 0 }} with result.output_throughput=0.0 (result file: ${join(bad.runDir, 'bench', 'result.json')})`,
    );
    const html = reportOf(bad.runDir);
    expect(html).toContain('<div class="failure" data-task="bench">');
    expect(html).toContain('result.output_throughput = 0.0');
    const good = run([recipe(yaml('>='))]);
    expect(good.code, good.stderr).toBe(0);
    expect(taskTable(good.runDir)).toMatchObject({
      bench: { status: 'COMPLETED' },
      after: { status: 'COMPLETED' },
    });
    expect(reportOf(good.runDir)).toContain('<td class="ok" title="');
    const cmp = join(good.cwd, 'cmp.html');
    const c = sflow(['report', bad.runDir, good.runDir, '-o', cmp]);
    expect(c.code, c.stderr).toBe(0);
    const page = readFileSync(cmp, 'utf8');
    expect(countOf(page, '<rect class="bar ')).toBe(3);
    expect(countOf(page, '<tr data-task="bench">')).toBe(2);
  });

  it('dry-run checks assertion names: an unknown result.<name> is a located error', () => {
    const f = recipe(`version: "0.1"
workflow:
  name: w
  tasks:
    - name: bench
      script: [echo hi]
      result:
        errors: 'errors: (\\d+)'
      assert:
        - "\${{ result.eror == 0 }}"
`);
    const r = sflow(['run', '-f', f, '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${f}:10:11: assert of task 'bench' reads result.eror`);
    expect(r.stderr).toContain("did you mean 'errors'?");
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('sflow report refuses a folder that is not a run directory (usage error, no stack)', () => {
    const r = sflow(['report', EXAMPLES]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not an sflow run directory');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });
});
