/** v0.3 multi-file composition: deep merge by name, first-seen task order, override warnings. */
import { describe, expect, it } from 'vitest';
import { normaliseCollections } from '../../../src/config/collections.js';
import { SflowError } from '../../../src/config/errors.js';
import { mergeDocuments } from '../../../src/config/merge.js';
import { entryOrigin, locate } from '../../../src/config/source.js';
import { parseYamlText, type ParsedFile } from '../../../src/config/yaml-load.js';

type Obj = Record<string, unknown>;

function file(name: string, text: string): ParsedFile {
  const p = parseYamlText(text, name);
  normaliseCollections(p.value);
  return p;
}
const merge = (...files: [string, string][]) => mergeDocuments(files.map(([n, t]) => file(n, t)));
const messages = (r: { warnings: { message: string }[] }) => r.warnings.map((w) => w.message);
const tasksOf = (doc: Obj) => (doc.workflow as Obj).tasks as Obj[];

describe('deep merge by name', () => {
  it('merges same-name entries field by field in every named section', () => {
    const r = merge(
      [
        'a.yaml',
        'backends:\n  b: {type: slurm, account: x}\noperators:\n  o: {type: srun}\nstorage:\n  s: {type: s3, bucket: one}\n',
      ],
      [
        'b.yaml',
        'backends:\n  - {name: b, partition: p}\noperators:\n  o: {mpi: pmix}\nstorage:\n  s: {region: eu}\n',
      ],
    );
    expect(r.doc.backends).toEqual([{ name: 'b', type: 'slurm', account: 'x', partition: 'p' }]);
    expect(r.doc.operators).toEqual([{ name: 'o', type: 'srun', mpi: 'pmix' }]);
    expect(r.doc.storage).toEqual([{ name: 's', type: 's3', bucket: 'one', region: 'eu' }]);
    // only adding fields extends an entry: no override, and no "same value" claim
    expect(messages(r)).toEqual([]);
  });

  it('deep-merges nested mappings inside an entry (a later non-null leaf wins)', () => {
    const r = merge(
      [
        'a.yaml',
        'workflow:\n  name: w\n  tasks:\n    t:\n      script: [a]\n      resources: {gpus: {count: 2}, nodes: {count: 1}}\n',
      ],
      ['b.yaml', 'workflow:\n  tasks:\n    t:\n      resources: {gpus: {count: 4}, nodes: null}\n'],
    );
    expect(tasksOf(r.doc)[0]).toEqual({
      name: 't',
      script: ['a'],
      resources: { gpus: { count: 4 }, nodes: { count: 1 } },
    });
    expect(messages(r)).toEqual([
      'workflow.tasks.t.resources.gpus.count: overridden by b.yaml (previously from a.yaml), value: 2 → 4',
    ]);
  });

  it('keeps tasks in first-seen order and merges a task split across files', () => {
    const r = merge(
      [
        'a.yaml',
        'workflow:\n  name: w\n  tasks:\n    - {name: t1, script: [one]}\n    - {name: t2, script: [two]}\n',
      ],
      [
        'b.yaml',
        'workflow:\n  tasks:\n    - {name: t3, script: [three]}\n    - {name: t1, operator: fancy}\n',
      ],
    );
    expect(tasksOf(r.doc).map((t) => t.name)).toEqual(['t1', 't2', 't3']);
    expect(tasksOf(r.doc)[0]).toEqual({ name: 't1', script: ['one'], operator: 'fancy' });
  });

  it('replaces value lists (script, depends_on) instead of concatenating them, with a warning', () => {
    const r = merge(
      ['a.yaml', 'workflow:\n  name: w\n  tasks:\n    t: {script: [a, b], depends_on: [x]}\n'],
      ['b.yaml', 'workflow:\n  tasks:\n    t: {script: [c], depends_on: [x]}\n'],
    );
    expect(tasksOf(r.doc)[0]).toEqual({ name: 't', script: ['c'], depends_on: ['x'] });
    expect(messages(r)).toEqual([
      'workflow.tasks.t.script: overridden by b.yaml (previously from a.yaml), value: ["a","b"] → ["c"]',
    ]);
  });

  it('carries positions of the file that contributed each leaf', () => {
    const r = merge(['a.yaml', 'variables:\n  X: 3\n  Y: 1\n'], ['b.yaml', 'variables:\n  X: 5\n']);
    const vars = r.doc.variables as Obj[];
    expect(entryOrigin(vars[0], 'value')?.value).toEqual({ file: 'b.yaml', line: 2, col: 6 });
    expect(locate(r.doc, ['variables', 1, 'value'])).toEqual({ file: 'a.yaml', line: 3, col: 6 });
  });

  it('does not mutate the parsed input documents', () => {
    const a = file('a.yaml', 'variables:\n  X: 3\nworkflow:\n  name: w\n  tasks:\n    t: {script: [a]}\n');
    const before = JSON.stringify(a.value);
    mergeDocuments([
      a,
      file('b.yaml', 'variables:\n  X: 5\nworkflow:\n  tasks:\n    t: {depends_on: [u]}\n'),
    ]);
    expect(JSON.stringify(a.value)).toBe(before);
  });
});

describe('override warnings (spec config.md §4.3)', () => {
  it('a changed variable names the compared value, the new file and the previous one', () => {
    const r = merge(['A.yaml', 'variables:\n  X: 3\n'], ['B.yaml', 'variables:\n  X: {value: 5}\n']);
    expect(messages(r)).toEqual(['variables.X: overridden by B.yaml (previously from A.yaml), value: 3 → 5']);
    expect(r.warnings[0].location).toEqual({ file: 'B.yaml', line: 2, col: 14 });
    expect((r.doc.variables as Obj[])[0]).toEqual({ name: 'X', value: 5 });
  });

  it('a same-value redefinition says so, naming the file that defined it last', () => {
    const r = merge(
      ['A.yaml', 'variables:\n  X: 3\n'],
      ['B.yaml', 'variables:\n  X: 3\n'],
      ['C.yaml', 'variables:\n  X: 3\n'],
    );
    expect(messages(r)).toEqual([
      'variables.X: redefined by B.yaml (same value as A.yaml)',
      'variables.X: redefined by C.yaml (same value as B.yaml)',
    ]);
  });

  it('workflow variables and artifacts compare `value` and `uri`; other fields are named', () => {
    const r = merge(
      [
        'A.yaml',
        'artifacts:\n  m: {uri: "fs:///a"}\nworkflow:\n  name: w\n  variables:\n    W: {value: 1, type: integer}\n',
      ],
      [
        'B.yaml',
        'artifacts:\n  m: {uri: "fs:///b"}\nworkflow:\n  variables:\n    W: {value: 1, type: string}\n',
      ],
    );
    expect(messages(r)).toEqual([
      'artifacts.m: overridden by B.yaml (previously from A.yaml), value: fs:///a → fs:///b',
      'workflow.variables.W.type: overridden by B.yaml (previously from A.yaml), value: integer → string',
    ]);
  });

  it('a changed workflow name only warns (v0.3), the last one wins', () => {
    const r = merge(['A.yaml', 'workflow:\n  name: one\n'], ['B.yaml', 'workflow:\n  name: two\n']);
    expect((r.doc.workflow as Obj).name).toBe('two');
    expect(messages(r)).toEqual([
      'workflow.name: overridden by B.yaml (previously from A.yaml), value: one → two',
    ]);
  });

  it('shortens long values in the message', () => {
    const long = 'x'.repeat(100);
    const r = merge(['A.yaml', `variables:\n  X: ${long}\n`], ['B.yaml', 'variables:\n  X: y\n']);
    expect(messages(r)[0]).toBe(
      `variables.X: overridden by B.yaml (previously from A.yaml), value: ${'x'.repeat(57)}... → y`,
    );
  });
});

describe('version and contributions', () => {
  it('files that set version must agree', () => {
    let err: unknown;
    try {
      merge(
        ['A.yaml', 'version: "0.1"\n'],
        ['B.yaml', 'workflow: {name: w}\n'],
        ['C.yaml', 'version: "0.2"\n'],
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SflowError);
    const e = err as SflowError;
    expect(e.code).toBe('config.version_conflict');
    expect(e.message).toBe("Version conflict: '0.1' (from A.yaml) vs '0.2' (from C.yaml)");
    expect(e.location).toEqual({ file: 'C.yaml', line: 1, col: 10 });
  });

  it('agreeing versions, or none, merge fine', () => {
    expect(merge(['A.yaml', 'version: "0.1"\n'], ['B.yaml', 'version: "0.1"\n']).doc.version).toBe('0.1');
    expect(
      merge(['A.yaml', 'workflow: {name: w}\n'], ['B.yaml', 'variables: {X: 1}\n']).doc.version,
    ).toBeUndefined();
  });

  it('records what each file contributed, per section', () => {
    const r = merge(
      ['A.yaml', 'variables: {X: 1, Y: 2}\nworkflow:\n  name: w\n  timeout: 10\n  tasks: []\n'],
      [
        'B.yaml',
        'backends: {b: {type: local}}\nworkflow:\n  variables: {W: 1}\n  tasks: {t: {script: [x]}}\n',
      ],
    );
    expect(r.contributions).toEqual([
      {
        file: 'A.yaml',
        sections: [
          { section: 'variables', names: ['X', 'Y'] },
          { section: 'workflow.name', names: ['w'] },
          { section: 'workflow.timeout', names: ['10'] },
        ],
      },
      {
        file: 'B.yaml',
        sections: [
          { section: 'backends', names: ['b'] },
          { section: 'workflow.variables', names: ['W'] },
          { section: 'workflow.tasks', names: ['t'] },
        ],
      },
    ]);
  });
});
