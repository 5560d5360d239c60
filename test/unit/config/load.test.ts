/**
 * loadRecipe end to end on small files: warnings, located errors, and the composition cases of
 * spec/examples/11_modular (read in place) run in-process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../../helpers/scratch.js';
import { formatLocation, formatSflowError, SflowError } from '../../../src/config/errors.js';
import { loadRecipe, type LoadOptions } from '../../../src/config/load.js';
import { describeWithShared, sharedPath } from '../../helpers/shared.js';

const dir = scratchDir('sflow-load-');
const MODULAR = sharedPath('spec', 'examples', '11_modular');
const mod = (f: string) => join(MODULAR, f);

function write(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

function fails(opts: LoadOptions): SflowError {
  try {
    loadRecipe(opts);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected loadRecipe to fail');
}

describe('single file', () => {
  it('loads a dict-form recipe into the typed list form, with no warnings', () => {
    const f = write(
      'ok.yaml',
      'version: "0.1"\nvariables:\n  N: 2\nworkflow:\n  name: w\n  tasks:\n    a:\n      script:\n        - echo ${{ variables.N }}\n    b:\n      depends_on: [a]\n      script: [echo b]\n',
    );
    const r = loadRecipe({ files: [f] });
    expect(r.warnings).toEqual([]);
    expect(r.files).toEqual([f]);
    expect(r.recipe.workflow.name).toBe('w');
    expect(r.recipe.workflow.tasks.map((t) => t.name)).toEqual(['a', 'b']);
    expect(r.recipe.variables?.[0]).toMatchObject({ name: 'N', value: 2 });
    expect(r.contributions).toEqual([]);
  });

  it('loads `timeout` on the workflow and on tasks quietly (the run enforces or warns)', () => {
    const f = write(
      'timeout.yaml',
      'workflow:\n  name: w\n  timeout: 10\n  tasks:\n    - name: a\n      timeout: 1:00:00\n      script: [echo]\n',
    );
    const r = loadRecipe({ files: [f] });
    expect(r.warnings).toEqual([]);
    expect(r.recipe.workflow.timeout).toBe(10);
  });

  it('passes YAML warnings through (duplicate keys)', () => {
    const f = write('dup.yaml', 'workflow:\n  name: w\n  name: v\n  tasks: [{name: a, script: [x]}]\n');
    const r = loadRecipe({ files: [f] });
    expect(r.recipe.workflow.name).toBe('v');
    expect(r.warnings).toEqual([
      { message: "duplicate key 'name': the later value wins", location: { file: f, line: 3, col: 3 } },
    ]);
  });

  it('a validation error carries file:line:col of the offending value', () => {
    const f = write(
      'bad.yaml',
      'workflow:\n  name: w\n  tasks:\n    - name: a\n      script: [echo]\n      resources: {gpus: {count: two}}\n',
    );
    const e = fails({ files: [f] });
    expect(e.code).toBe('config.validation');
    expect(e.message).toMatch(
      /^Configuration validation failed: workflow\.tasks\[0\]\.resources\.gpus\.count: /,
    );
    expect(e.location).toEqual({ file: f, line: 6, col: 33 });
  });

  it('several problems are all listed, each located', () => {
    const f = write(
      'bad2.yaml',
      'variables:\n  C: {value: 4, domain: [4, 8]}\nworkflow:\n  name: w\n  tasks:\n    - name: a\n      depends_on: [zz]\n      script: [echo]\n',
    );
    const e = fails({ files: [f], set: ['C=5'] });
    expect(e.message).toBe('Configuration validation failed (2 problems):');
    expect(e.details.map((d) => d.path)).toEqual(['variables[0].value', 'workflow.tasks[0].depends_on[0]']);
    expect(e.details[0].message).toContain('not in the allowed domain');
    // the value came from --set; the error still points at the variable in the recipe
    expect(e.details[0].location).toEqual({ file: f, line: 2, col: 14 });
    expect(e.details[1].location).toEqual({ file: f, line: 7, col: 20 });
    expect(e.location).toEqual(e.details[0].location);
    expect(formatSflowError(e)).toContain(`${f}:7:20 workflow.tasks[0].depends_on[0]: `);
  });

  it('unknown keys are rejected at the key, with a hint', () => {
    const f = write(
      'key.yaml',
      'workflow:\n  name: w\n  tasks:\n    - name: a\n      scrpt: [echo]\n      script: [echo]\n',
    );
    const e = fails({ files: [f] });
    expect(e.location).toEqual({ file: f, line: 5, col: 7 });
    expect(`${e.message} ${e.hint ?? ''}`).toContain('script');
  });

  it('expression syntax errors are reported together, per string, before validation', () => {
    const f = write(
      'expr.yaml',
      'variables:\n  X: ${{ 1 + }}\nworkflow:\n  name: w\n  tasks:\n    - name: a\n      script:\n        - echo ${{ variables.C + }}\n        - echo ok\n        - "${{ ) }}"\n      resources: {gpus: {count: two}}\n',
    );
    const e = fails({ files: [f] });
    expect(e.code).toBe('config.expression_syntax');
    expect(e.message).toBe(`expression syntax validation failed in ${f}`);
    // plain scalars are located at the offending character; a quoted one at its start
    expect(e.details.map((d) => [d.path, d.location?.line, d.location?.col])).toEqual([
      ['variables[0].value', 2, 14],
      ['workflow.tasks[0].script[0]', 8, 34],
      ['workflow.tasks[0].script[2]', 10, 11],
    ]);
    expect(e.details[1].message).toBe(`expected an expression after '+' in "echo \${{ variables.C + }}"`);
    expect(e.location).toEqual(e.details[0].location);
  });

  it('a literal block script points at the line and column of the bad expression', () => {
    const f = write(
      'expr2.yaml',
      'workflow:\n  name: w\n  tasks:\n    - name: a\n      script:\n        - |\n          echo one\n\n          echo ${{ 1 + }}\n',
    );
    expect(fails({ files: [f] }).location).toEqual({ file: f, line: 9, col: 24 });
  });

  it('usage errors: no files, and -M with a single file', () => {
    const none = fails({ files: [] });
    expect(none.message).toBe('no input files provided');
    expect(none.exitCode).toBe(2);
    const bench = write(
      'bench-only.yaml',
      'workflow:\n  name: w\n  tasks:\n    - {name: bench, script: [x], depends_on: [agg_server]}\n',
    );
    const one = fails({ files: [bench], missable: ['agg_server'] });
    expect(one.message).toContain('only valid with multiple input files');
    expect(one.exitCode).toBe(2);
    // bulk/batch modes may use -M with one file
    expect(() =>
      loadRecipe({
        files: [bench],
        missable: ['agg_server'],
        allowMissableWithOneFile: true,
      }),
    ).not.toThrow();
  });

  it('--set and --artifact apply before validation and are reported', () => {
    const f = write(
      'set.yaml',
      'variables:\n  N: 1\nartifacts:\n  m: {uri: "fs:///m"}\nworkflow:\n  name: w\n  tasks: [{name: a, script: [x]}]\n',
    );
    const r = loadRecipe({ files: [f], set: ['N=[2, 3]'], artifacts: ['m=fs:///other'] });
    expect(r.recipe.variables?.[0]).toMatchObject({ value: 2, domain: [2, 3] });
    expect(r.recipe.artifacts?.[0]).toMatchObject({ uri: 'fs:///other' });
    expect(r.setOverrides.map((s) => [s.key, s.isDomain])).toEqual([['N', true]]);
    expect(r.artifactOverrides).toEqual([{ name: 'm', uri: 'fs:///other' }]);
    expect(fails({ files: [f], set: ['M=1'] }).message).toContain('not defined in the configuration');
  });
});

describeWithShared('spec/examples/11_modular', 'composition (spec/examples/11_modular cases)', () => {
  const A = [mod('base.yaml'), mod('server.yaml'), mod('bench.yaml')];

  it('A: -M agg_server removes the reference and reports it; REQUESTS override warning', () => {
    const r = loadRecipe({ files: A, missable: ['agg_server'] });
    expect(r.warnings.map((w) => w.message)).toEqual([
      `merge: variables.REQUESTS: overridden by ${mod('bench.yaml')} (previously from ${mod('base.yaml')}), value: 3 → 5`,
      'Missable tasks: removed 1 reference(s) to absent tasks: bench.depends_on: agg_server',
    ]);
    expect(r.warnings[0].location).toMatchObject({ file: mod('bench.yaml'), line: 9 });
    expect(r.missableRemovals).toEqual(['bench.depends_on: agg_server']);
    expect(r.recipe.workflow.tasks.map((t) => [t.name, t.depends_on])).toEqual([
      ['server', undefined],
      ['bench', ['server']],
    ]);
    expect(r.recipe.variables?.map((v) => [v.name, v.value])).toEqual([
      ['PORT', 18090],
      ['REQUESTS', 5],
      ['SERVER_MSG', 'hi'],
    ]);
    expect(r.contributions.map((c) => c.file)).toEqual(A);
  });

  it('C: without -M, the unknown task is a located error in bench.yaml', () => {
    const e = fails({ files: A });
    expect(e.message).toContain("depends on unknown task 'agg_server'");
    expect(e.location).toEqual({ file: mod('bench.yaml'), line: 15, col: 28 });
  });

  it('E (v0.3): the same fragment twice is a no-op redefinition', () => {
    const r = loadRecipe({ files: [...A, mod('bench.yaml')], missable: ['agg_server'] });
    expect(r.recipe.workflow.tasks.map((t) => t.name)).toEqual(['server', 'bench']);
    const msgs = r.warnings.map((w) => w.message);
    expect(msgs).toContain(
      `merge: variables.REQUESTS: redefined by ${mod('bench.yaml')} (same value as ${mod('bench.yaml')})`,
    );
    expect(msgs).toContain(
      `merge: workflow.tasks.bench: redefined by ${mod('bench.yaml')} (same value as ${mod('bench.yaml')})`,
    );
  });

  it('F (v0.3): required_by on server gives the same DAG as depends_on on bench', () => {
    const r = loadRecipe({ files: [mod('base.yaml'), mod('server_attached.yaml'), mod('bench_plain.yaml')] });
    expect(r.recipe.workflow.tasks.map((t) => [t.name, t.depends_on ?? []])).toEqual([
      ['server', []],
      ['bench', ['server']],
    ]);
  });

  it('required_by to a task absent from the composition is a located error, as in depends_on', () => {
    let err: unknown;
    try {
      loadRecipe({ files: [mod('base.yaml'), mod('server_attached.yaml')] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SflowError);
    const e = err as SflowError;
    expect(e.message).toMatch(/required_by\[0\]: Task 'server' is required_by unknown task 'bench'$/);
    expect(formatLocation(e.location)).toMatch(/server_attached\.yaml:\d+:\d+$/);
  });

  it('… and under -M naming it: removed and reported like an absent depends_on', () => {
    const r = loadRecipe({
      files: [mod('base.yaml'), mod('server_attached.yaml')],
      missable: ['bench'],
    });
    expect(r.recipe.workflow.tasks.map((t) => [t.name, t.required_by])).toEqual([['server', undefined]]);
    expect(r.missableRemovals).toEqual(['server.required_by: bench']);
    expect(r.warnings.map((w) => w.message)).toEqual([
      'Missable tasks: removed 1 reference(s) to absent tasks: server.required_by: bench',
    ]);
  });

  it('a -M pattern that matches nothing is reported', () => {
    const r = loadRecipe({ files: A, missable: ['agg_*', 'nothing_*'] });
    expect(r.warnings.map((w) => w.message)).toContain(
      "--missable-tasks 'nothing_*' matched no task and no reference",
    );
  });

  it('a version conflict between fragments is a located error', () => {
    const f = write('v2.yaml', 'version: "0.2"\n');
    const e = fails({ files: [mod('base.yaml'), f] });
    expect(e.message).toBe(`Version conflict: '0.1' (from ${mod('base.yaml')}) vs '0.2' (from ${f})`);
    expect(e.location).toEqual({ file: f, line: 1, col: 10 });
  });
});
