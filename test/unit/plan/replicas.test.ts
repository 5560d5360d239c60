/**
 * Replica expansion from recipe to plan (src/plan/replicas.ts, spec config.md §5.7): the policy,
 * `count`, sweeps over variables, secret sweep values in names, and every plan error with its code,
 * its words and the line and column it points at. Needs no ../shared.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import { SflowError } from '../../../src/util/sflow-error.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-replicas-');
let n = 0;

const VARS = `variables:
  MODE:
    value: agg
    domain: [agg, disagg]
  PLAIN:
    value: x
  KEY:
    value: k1
    secret: true
    domain: [k1, k2]
`;

/** a recipe with the variables above and `tasks` (YAML lines under workflow.tasks) */
function plan(tasks: string): Plan {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, `version: "0.1"\n${VARS}workflow:\n  name: reps\n  tasks:\n${tasks}`);
  return buildPlan(loadRecipe({ files: [file] }), {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

function planFails(tasks: string): SflowError & { location: NonNullable<SflowError['location']> } {
  try {
    plan(tasks);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    const s = e as SflowError;
    expect(s.location).toBeDefined();
    return s as SflowError & { location: NonNullable<SflowError['location']> };
  }
  throw new Error('expected a plan error');
}

// the recipe's line numbers: 1 version, 2-11 variables, 12 workflow, 13 name, 14 tasks, 15 first task
const FIRST_TASK_LINE = 15;

const givenCap = process.env.SFLOW_MAX_TASKS;
afterEach(() => {
  if (givenCap === undefined) delete process.env.SFLOW_MAX_TASKS;
  else process.env.SFLOW_MAX_TASKS = givenCap;
});

describe('replicas.policy', () => {
  it('is parallel unless given; sequential chains the replicas in index order', () => {
    const p = plan(
      `    - name: par
      replicas: {count: 2}
      script: [echo]
    - name: seq
      replicas: {count: 3, policy: "\${{ ' Sequential ' }}"}
      script: [echo]
`,
    );
    const by = new Map(p.tasks.map((t) => [t.name, t]));
    expect(by.get('par_1')?.policy).toBe('parallel');
    expect(by.get('par_1')?.dependsOn).toEqual([]);
    expect(by.get('seq_0')?.policy).toBe('sequential');
    expect(by.get('seq_0')?.dependsOn).toEqual([]);
    expect(by.get('seq_2')?.dependsOn).toEqual(['seq_1']);
  });

  it('refuses anything else, lower-cased in the message, pointing at the policy', () => {
    const e = planFails(
      `    - name: t\n      replicas:\n        count: 2\n        policy: "\${{ 'Random' }}"\n      script: [echo]\n`,
    );
    expect(e.code).toBe('plan.replicas_policy');
    expect(e.message).toBe("replicas.policy of task 't' must be 'parallel' or 'sequential', got 'random'");
    expect(e.location.line).toBe(FIRST_TASK_LINE + 3);
  });
});

describe('replicas.count', () => {
  it('names replicas <base>_<i> and makes the task a group in expressions', () => {
    const p = plan(
      `    - name: w
      replicas: {count: 2}
      script: [echo]
    - name: solo
      script: [echo]
    - name: after
      depends_on: [w, solo]
      script: ['echo \${{ task.w[1].backend }} \${{ task.solo.backend }}']
`,
    );
    expect(p.tasks.map((t) => t.name)).toEqual(['w_0', 'w_1', 'solo', 'after']);
    expect(p.tasks.map((t) => t.replicaCount)).toEqual([2, 2, 1, 1]);
    const after = p.tasks.find((t) => t.name === 'after');
    expect(after?.script).toBe('echo local local');
    expect(after?.dependsOn).toEqual(['w_0', 'w_1', 'solo']);
  });

  it('takes one', () => {
    expect(
      plan(`    - name: one\n      replicas: {count: 1}\n      script: [echo]\n`).tasks.map((t) => t.name),
    ).toEqual(['one_0']);
  });

  it.each([0, -2])('refuses %i, pointing at the count', (count) => {
    const e = planFails(
      `    - name: t\n      replicas:\n        count: "\${{ ${count} }}"\n      script: [echo]\n`,
    );
    expect(e.code).toBe('plan.replicas_count');
    expect(e.message).toBe(`replicas.count must be > 0 (task 't', got ${count})`);
    expect(e.location.line).toBe(FIRST_TASK_LINE + 2);
  });

  it('must match the size of a sweep when both are given', () => {
    const ok = plan(`    - name: t\n      replicas: {count: 2, variables: [MODE]}\n      script: [echo]\n`);
    expect(ok.tasks.map((t) => t.name)).toEqual(['t_agg', 't_disagg']);
    const e = planFails(
      `    - name: t\n      replicas:\n        count: 3\n        variables: [MODE]\n      script: [echo]\n`,
    );
    expect(e.code).toBe('plan.replicas_sweep_size');
    expect(e.message).toBe("replicas.count=3 does not match sweep size 2 (task 't')");
    expect(e.hint).toBe('drop replicas.count or set it to 2');
    expect(e.location.line).toBe(FIRST_TASK_LINE + 2);
  });
});

describe('replicas.variables', () => {
  it('refuses an unknown variable, listing the declared ones, at its place in the list', () => {
    const e = planFails(
      `    - name: t\n      replicas:\n        variables:\n          - MODE\n          - NOPE\n      script: [echo]\n`,
    );
    expect(e.code).toBe('plan.replicas_unknown_variable');
    expect(e.message).toBe("replicas of task 't' references unknown variable 'NOPE'");
    expect(e.hint).toBe('declared variables: MODE, PLAIN, KEY');
    expect(e.location.line).toBe(FIRST_TASK_LINE + 4);
  });

  it('refuses a variable without a domain', () => {
    const e = planFails(
      `    - name: t\n      replicas:\n        variables: [MODE, PLAIN]\n      script: [echo]\n`,
    );
    expect(e.code).toBe('plan.replicas_no_domain');
    expect(e.message).toBe("replicas of task 't' requires variable 'PLAIN' to define a non-empty domain");
    expect(e.hint).toBe("add `domain: [...]` to 'PLAIN' or sweep it with --set 'PLAIN=[a,b]'");
    expect(e.location.line).toBe(FIRST_TASK_LINE + 2);
  });

  it("never puts a secret's value in a name: secret<k>, masked in the sweep", () => {
    const p = plan(`    - name: s\n      replicas: {variables: [KEY, MODE]}\n      script: [echo]\n`);
    expect(p.tasks.map((t) => t.name)).toEqual([
      's_secret0_agg',
      's_secret0_disagg',
      's_secret1_agg',
      's_secret1_disagg',
    ]);
    expect(p.tasks.map((t) => t.sweep)).toEqual([
      { KEY: 'secret0', MODE: 'agg' },
      { KEY: 'secret0', MODE: 'disagg' },
      { KEY: 'secret1', MODE: 'agg' },
      { KEY: 'secret1', MODE: 'disagg' },
    ]);
  });

  it('makes a swept task a group in expressions', () => {
    const p = plan(
      `    - name: s
      replicas: {variables: [MODE]}
      script: [echo]
    - name: after
      depends_on: [s]
      script: ['echo \${{ task.s[1].backend }}']
`,
    );
    expect(p.tasks.find((t) => t.name === 'after')?.script).toBe('echo local');
  });

  it('refuses two values that give the same name', () => {
    const file = join(dir, `clash${++n}.yaml`);
    writeFileSync(
      file,
      `version: "0.1"\nvariables:\n  V:\n    value: a.b\n    domain: [a.b, a-b]\nworkflow:\n  name: c\n  tasks:\n    - name: t\n      replicas: {variables: [V]}\n      script: [echo]\n`,
    );
    let err: unknown;
    try {
      buildPlan(loadRecipe({ files: [file] }), {
        dryRun: true,
        runId: 'r',
        workspaceDir: dir,
        catalog: backendCatalog,
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SflowError);
    const e = err as SflowError;
    expect(e.code).toBe('plan.replicas_name_clash');
    expect(e.message).toBe("sweep replicas 0 and 1 of task 't' both get the name 't_a_b'");
    expect(e.hint).toContain('use domain values that differ after replacing');
    expect(e.location?.line).toBe(10);
  });
});

describe('the instance cap', () => {
  it('points at the count, or at the variables, of the task that passes it', () => {
    process.env.SFLOW_MAX_TASKS = '3';
    const byCount = planFails(`    - name: t\n      replicas:\n        count: 4\n      script: [echo]\n`);
    expect(byCount.code).toBe('plan.too_many_tasks');
    expect(byCount.location.line).toBe(FIRST_TASK_LINE + 2);
    const bySweep = planFails(
      `    - name: t\n      replicas:\n        policy: parallel\n        variables: [MODE, KEY]\n      script: [echo]\n`,
    );
    expect(bySweep.code).toBe('plan.too_many_tasks');
    expect(bySweep.location.line).toBe(FIRST_TASK_LINE + 3);
    expect(bySweep.message).toContain("task 't' expands to 4 instance(s)");
    // a plain task counts one: four of them pass a cap of 3
    const plain = planFails(
      ['a', 'b', 'c', 'd'].map((t) => `    - name: ${t}\n      script: [echo]\n`).join(''),
    );
    expect(plain.code).toBe('plan.too_many_tasks');
    expect(plain.message).toContain(
      "task 'd' expands to 1 instance(s) (after 3 instance(s) of earlier tasks)",
    );
  });
});
