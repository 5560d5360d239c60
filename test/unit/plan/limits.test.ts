/**
 * Plan-time limits, each a located error before anything is allocated: task instances
 * (replicas, sweeps), delays beyond what a timer can hold, NUL characters, unsafe folder names.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { buildPlan } from '../../../src/plan/build.js';
import { DEFAULT_MAX_TASKS, maxTaskInstances, MAX_DELAY_S } from '../../../src/plan/limits.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-limits-');
let n = 0;

function plan(yaml: string, name = `r${++n}.yaml`) {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return buildPlan(loadRecipe({ files: [file] }), {
    dryRun: false,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

function planError(yaml: string): SflowError {
  try {
    plan(yaml);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a plan error');
}

const task = (extra: string, script = 'echo hi') =>
  `workflow:\n  name: w\n  tasks:\n    - name: t\n${extra}      script:\n        - ${script}\n`;

describe('task instance cap', () => {
  it('refuses replicas.count beyond the cap before building anything, at the count', () => {
    const e = planError(task('      replicas:\n        count: 10000000\n'));
    expect(e.code).toBe('plan.too_many_tasks');
    expect(e.message).toContain(
      `task 't' expands to 10000000 instance(s); a plan holds at most ${DEFAULT_MAX_TASKS}`,
    );
    expect(e.hint).toContain('SFLOW_MAX_TASKS');
    expect(e.location?.line).toBe(6);
  });

  it('refuses a sweep whose product exceeds the cap, and counts all tasks together', () => {
    const values = `[${Array.from({ length: 200 }, (_, i) => i).join(', ')}]`;
    const e = planError(
      `variables:\n  A: {value: 0, domain: ${values}}\n  B: {value: 0, domain: ${values}}\n` +
        task('      replicas:\n        variables: [A, B]\n'),
    );
    expect(e.message).toContain('expands to 40000 instance(s)');
    const two = planError(
      'workflow:\n  name: w\n  tasks:\n' +
        '    - {name: a, script: [x], replicas: {count: 6000}}\n' +
        '    - {name: b, script: [x], replicas: {count: 6000}}\n',
    );
    expect(two.message).toContain(
      "task 'b' expands to 6000 instance(s) (after 6000 instance(s) of earlier tasks)",
    );
  });

  it('reads SFLOW_MAX_TASKS', () => {
    expect(maxTaskInstances({ SFLOW_MAX_TASKS: '50000' })).toBe(50000);
    expect(maxTaskInstances({})).toBe(DEFAULT_MAX_TASKS);
    expect(() => maxTaskInstances({ SFLOW_MAX_TASKS: 'lots' })).toThrow(/whole number/);
  });
});

describe('delays', () => {
  it('refuses a retry wait a timer cannot hold (interval × backoff^(count-1))', () => {
    const e = planError(task('      retries:\n        count: 2\n        interval: 3000000\n'));
    expect(e.code).toBe('plan.delay_too_long');
    expect(e.message).toContain(`limited to ${MAX_DELAY_S} s (24 days)`);
    const backoff = planError(
      task('      retries:\n        count: 12\n        interval: 60\n        backoff: 10\n'),
    );
    expect(backoff.message).toContain('is 6000000000000 s');
  });

  it('refuses probe timeouts and intervals beyond the cap', () => {
    const e = planError(
      task(
        '      probes:\n        readiness:\n          tcp_port: {port: 8000}\n          timeout: 99999999\n',
      ),
    );
    expect(e.message).toContain("readiness probe timeout of task 't' is 99999999 s");
  });
});

describe('NUL characters', () => {
  it('in a variable value or domain: a located plan error', () => {
    const e = planError('variables:\n  X: "a\\0b"\n' + task(''));
    expect(e.code).toBe('plan.nul_character');
    expect(e.message).toContain("variable 'X' contains a NUL character");
    expect(e.location?.line).toBe(2);
    const d = planError('variables:\n  X: {value: a, domain: [a, "b\\0"]}\n' + task(''));
    expect(d.message).toContain("variable 'X' contains a NUL character");
  });

  it('in a script: a located plan error', () => {
    const e = planError(task('', '"echo a\\0b"'));
    expect(e.message).toContain("task 't': its command");
    expect(e.location?.line).toBe(5);
  });
});

describe('name and path lengths', () => {
  it('a replica whose log file name is too long: located at its task, named as a replica', () => {
    const long = 'n'.repeat(250);
    const e = planError(
      `workflow:\n  name: w\n  tasks:\n    - name: ok\n      script: [ "true" ]\n    - name: ${long}\n      replicas:\n        count: 2\n      script:\n        - echo hi\n`,
    );
    expect(e.code).toBe('plan.name_too_long');
    expect(e.message).toContain(`(replica of '${'n'.repeat(40)}…${'n'.repeat(10)}') is 252 bytes long`);
    expect(e.message).toContain("log file '<name>.log' would be 256 bytes");
    expect(e.location?.line).toBe(6);
  });

  it('a log path over PATH_MAX: located at the task', () => {
    // over PATH_MAX by itself, whatever the length of the temp folder it is in
    const deep = join(dir, ...Array.from({ length: 21 }, () => 'd'.repeat(200)));
    const file = join(dir, `deep${++n}.yaml`);
    writeFileSync(file, task(''));
    try {
      buildPlan(loadRecipe({ files: [file] }), {
        dryRun: true,
        runId: 'run-1',
        workspaceDir: dir,
        outputDir: deep,
        catalog: backendCatalog,
      });
      throw new Error('expected a plan error');
    } catch (e) {
      expect((e as SflowError).code).toBe('plan.path_too_long');
      expect((e as SflowError).message).toContain("the log path of task 't' would be");
      expect((e as SflowError).location?.line).toBe(4);
    }
  });
});

describe('folder names', () => {
  it('keeps the run folder of workflow ../../../x inside the output folder', () => {
    const p = plan(task('').replace('name: w', 'name: ../../../x'));
    expect(p.paths.runDir.startsWith(join(dir, 'sflow_output') + '/')).toBe(true);
    expect(p.tasks[0].outputDir.startsWith(p.paths.runDir + '/')).toBe(true);
  });

  it('turns sweep values with / and newlines into safe replica names and folders', () => {
    const p = plan(
      'variables:\n  S: {value: "a/b", domain: ["a/b", "c\\nd"]}\n' +
        task('      replicas:\n        variables: [S]\n'),
    );
    expect(p.tasks.map((t) => t.name)).toEqual(['t_a_b', 't_c_d']);
    for (const t of p.tasks) expect(t.outputDir).toBe(join(p.paths.runDir, t.name));
  });
});
