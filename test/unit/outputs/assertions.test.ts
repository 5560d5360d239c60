/** `assert:`: plan-time checks (located errors) and evaluation after result parsing. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../../src/config/load.js';
import { SflowError, formatSflowError } from '../../../src/config/errors.js';
import { buildPlan } from '../../../src/plan/build.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { assertionFailure, checkAssertions } from '../../../src/outputs/assertions.js';
import { PyFloat } from '../../../src/outputs/json-write.js';
import type { PlannedAssertion } from '../../../src/plan/types.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function plan(yaml: string) {
  const d = mkdtempSync(join(tmpdir(), 'sflow-assert-'));
  dirs.push(d);
  const f = join(d, 'r.yaml');
  writeFileSync(f, yaml);
  return buildPlan(loadRecipe({ files: [f] }), {
    dryRun: true,
    runId: 'r',
    workspaceDir: d,
    catalog: backendCatalog,
  });
}

function planError(yaml: string): SflowError {
  try {
    plan(yaml);
  } catch (e) {
    if (e instanceof SflowError) return e;
    throw e;
  }
  throw new Error('expected a plan error');
}

const recipe = (
  asserts: string[],
  result = "    result:\n      tput: 'tput: ([\\d.]+)'\n      errors: 'errors: (\\d+)'\n",
) => `version: "0.1"
variables:
  MIN:
    type: integer
    value: 5
  CONC:
    type: integer
    value: 1
    domain: [1, 4]
workflow:
  name: w
  tasks:
  - name: bench
    replicas:
      variables: [CONC]
    script: [echo hi]
${result}    assert:
${asserts.map((a) => `      - "${a}"`).join('\n')}
`;

describe('assert: at plan time', () => {
  it('plans each replica with its own sweep values bound', () => {
    const p = plan(recipe(['${{ result.tput >= MIN * CONC }}', '${{ result.errors == 0 }}']));
    const [a, b] = p.tasks;
    expect(a.asserts?.map((x) => x.source)).toEqual([
      '${{ result.tput >= MIN * CONC }}',
      '${{ result.errors == 0 }}',
    ]);
    expect(a.asserts?.[0].bindings).toEqual({ MIN: 5, CONC: 1 });
    expect(b.asserts?.[0].bindings).toEqual({ MIN: 5, CONC: 4 });
    expect(a.asserts?.[0].location).toMatch(/r\.yaml:\d+:\d+$/);
  });

  it('an unknown result name is a located error with a suggestion', () => {
    const e = planError(recipe(['${{ result.tpt > 0 }}']));
    expect(e.code).toBe('plan.assert_unknown_result');
    expect(e.location?.line).toBe(21);
    expect(e.message).toContain('result.tpt');
    expect(e.hint).toContain("'tput'");
  });

  it('an unknown name, a non-expression entry and a task without result: are refused', () => {
    expect(planError(recipe(['${{ reslt.tput > 0 }}'])).hint).toContain("'result'");
    expect(planError(recipe(['tput ${{ result.tput }}'])).code).toBe('plan.assert_form');
    expect(planError(recipe(['${{ result.tput > 0 }}'], '')).code).toBe('plan.assert_without_result');
  });

  it('syntax errors are caught when the recipe loads', () => {
    let text = '';
    try {
      plan(recipe(['${{ result.tput > }}']));
    } catch (e) {
      text = formatSflowError(e as SflowError);
    }
    expect(text).toMatch(/r\.yaml:21:\d+/);
  });

  it('with result.file the names are only known at run time', () => {
    const p = plan(recipe(['${{ result.anything > 0 }}'], '    result:\n      file: out.json\n'));
    expect(p.tasks[0].asserts).toHaveLength(1);
  });
});

describe('assert: after result parsing', () => {
  const a = (source: string, bindings: PlannedAssertion['bindings'] = {}): PlannedAssertion => ({
    source,
    location: 'r.yaml:1:1',
    bindings,
  });

  it('a holding assertion passes; a false one reports the values it saw', () => {
    const out = checkAssertions([a('${{ result.errors == 0 }}'), a('${{ result.tput > MIN }}', { MIN: 5 })], {
      errors: 0,
      tput: new PyFloat(0),
    });
    expect(out[0]).toEqual({ expr: '${{ result.errors == 0 }}', ok: true, seen: { 'result.errors': '0' } });
    expect(out[1]).toEqual({
      expr: '${{ result.tput > MIN }}',
      ok: false,
      seen: { 'result.tput': '0.0', MIN: '5' },
    });
    expect(assertionFailure(out, '/run/bench/result.json')).toBe(
      'assertion failed: ${{ result.tput > MIN }} with result.tput=0.0, MIN=5 (result file: /run/bench/result.json)',
    );
    expect(assertionFailure([out[0]], '/x')).toBeUndefined();
  });

  it('a value that was not parsed fails the assertion with a reason', () => {
    const [o] = checkAssertions([a('${{ result.tput > 0 }}')], {});
    expect(o.ok).toBe(false);
    expect(o.seen).toEqual({ 'result.tput': '<missing>' });
    expect(o.error).toMatch(/tput/);
  });
});
