/** Named collections → list form with positions; `locate` turns document paths into file:line:col. */
import { describe, expect, it } from 'vitest';
import { normaliseCollections, toListForm } from '../../../src/config/collections.js';
import { entryOrigin, formatPath, locate } from '../../../src/config/source.js';
import { parseYamlText } from '../../../src/config/yaml-load.js';

type Obj = Record<string, unknown>;

const parse = (text: string): Obj => parseYamlText(text, 'c.yaml').value;
const at = (line: number, col: number) => ({ file: 'c.yaml', line, col });

describe('collections to list form', () => {
  it('turns dict form into `{name, …}` items in file order; the key wins over a `name` in the body', () => {
    const doc = parse('backends:\n  gpu:\n    type: local\n  cpu:\n    name: other\n    type: local\n');
    normaliseCollections(doc);
    expect(doc.backends).toEqual([
      { name: 'gpu', type: 'local' },
      { name: 'cpu', type: 'local' },
    ]);
  });

  it('turns scalar shorthand `X: 5` into `{name: X, value: 5}` and keeps the float flag', () => {
    const doc = parse('variables:\n  A: 5\n  B: 2.0\n  C: {value: x, type: string}\n');
    normaliseCollections(doc);
    const vars = doc.variables as Obj[];
    expect(vars).toEqual([
      { name: 'A', value: 5 },
      { name: 'B', value: 2 },
      { name: 'C', value: 'x', type: 'string' },
    ]);
    expect(entryOrigin(vars[1], 'value')).toMatchObject({ key: at(3, 3), value: at(3, 6), float: true });
    expect(entryOrigin(vars[0], 'value')?.float).toBeFalsy();
  });

  it('carries positions over: item → its key, fields → their own key/value, name → the key', () => {
    const doc = parse(
      'workflow:\n  name: w\n  tasks:\n    a:\n      script: [echo a]\n    b:\n      depends_on: [a]\n      script: [echo b]\n',
    );
    normaliseCollections(doc);
    const tasks = (doc.workflow as Obj).tasks as Obj[];
    expect(tasks.map((t) => t.name)).toEqual(['a', 'b']);
    expect(entryOrigin(tasks, 1)?.key).toEqual(at(6, 5));
    expect(entryOrigin(tasks[1], 'name')).toEqual({ key: at(6, 5), value: at(6, 5) });
    expect(entryOrigin(tasks[1], 'depends_on')).toEqual({ key: at(7, 7), value: at(7, 19) });
    expect(locate(doc, ['workflow', 'tasks', 1, 'depends_on', 0])).toEqual(at(7, 20));
  });

  it('keeps the written order of integer-like names (a JS object would list them first)', () => {
    const doc = parse(
      'workflow:\n  name: w\n  tasks:\n    b: {script: [x]}\n    "2": {script: [x]}\n    "1": {script: [x]}\n',
    );
    normaliseCollections(doc);
    expect(((doc.workflow as Obj).tasks as Obj[]).map((t) => t.name)).toEqual(['b', '2', '1']);
  });

  it('leaves list form as it is, null becomes an empty list, other values are left for the schema', () => {
    const doc = parse(
      'variables:\n  - name: A\n    value: 1\nartifacts:\noperators: 5\nworkflow:\n  name: w\n  variables:\n  tasks: []\n',
    );
    const vars = doc.variables;
    normaliseCollections(doc);
    expect(doc.variables).toBe(vars);
    expect(doc.artifacts).toEqual([]);
    expect(doc.operators).toBe(5);
    expect((doc.workflow as Obj).variables).toEqual([]);
    expect(toListForm('text')).toBe('text');
  });

  it('normalises every named collection, top level and under workflow', () => {
    const doc = parse(
      'variables: {A: 1}\nartifacts: {m: {uri: "fs:///m"}}\nbackends: {b: {type: local}}\noperators: {o: {type: bash}}\nstorage: {s: {type: s3, bucket: x}}\nworkflow:\n  name: w\n  variables: {W: 2}\n  tasks: {t: {script: [x]}}\n',
    );
    normaliseCollections(doc);
    for (const k of ['variables', 'artifacts', 'backends', 'operators', 'storage'])
      expect(Array.isArray(doc[k]), k).toBe(true);
    const wf = doc.workflow as Obj;
    expect(wf.variables).toEqual([{ name: 'W', value: 2 }]);
    expect(wf.tasks).toEqual([{ name: 't', script: ['x'] }]);
  });
});

describe('locate', () => {
  const doc = parse(
    [
      'version: "0.1"', // 1
      'workflow:', // 2
      '  name: w', // 3
      '  tasks:', // 4
      '    - name: a', // 5
      '      resources:', // 6
      '        gpus:', // 7
      '          count: 2', // 8
      '      probes:', // 9
      '        readiness:', // 10
      '          tcp_port: {port: 80}', // 11
      '      script:', // 12
      '        - echo a', // 13
      '',
    ].join('\n'),
  );

  it('points at a scalar value, or at the key of a container', () => {
    expect(locate(doc, ['workflow', 'name'])).toEqual(at(3, 9));
    expect(locate(doc, ['workflow', 'tasks', 0, 'resources', 'gpus', 'count'])).toEqual(at(8, 18));
    expect(locate(doc, ['workflow', 'tasks', 0, 'resources'])).toEqual(at(6, 7));
    expect(locate(doc, ['workflow', 'tasks', 0, 'script', 0])).toEqual(at(13, 11));
  });

  it('with atKey, points at the key of a scalar entry', () => {
    expect(locate(doc, ['workflow', 'name'], true)).toEqual(at(3, 3));
    expect(locate(doc, ['workflow', 'tasks', 0, 'resources', 'gpus', 'count'], true)).toEqual(at(8, 11));
  });

  it('points a missing key at the key of the container that lacks it', () => {
    expect(locate(doc, ['workflow', 'tasks', 0, 'resources', 'gpus', 'indices'])).toEqual(at(7, 9));
    expect(locate(doc, ['workflow', 'tasks', 0, 'backend'])).toEqual(at(5, 7));
    expect(locate(doc, ['workflow', 'timeout'])).toEqual(at(2, 1));
    expect(locate(doc, ['workflow', 'tasks', 5, 'name'])).toEqual(at(4, 3));
  });

  it('accepts a single item where a list is expected: `[0]` is the item itself', () => {
    expect(locate(doc, ['workflow', 'tasks', 0, 'probes', 'readiness', 0, 'tcp_port', 'port'])).toEqual(
      at(11, 28),
    );
  });

  it('gives the document start for an empty path', () => {
    expect(locate(doc, [])).toEqual(at(1, 1));
    expect(locate({}, ['x'])).toBeUndefined();
  });

  it('formats paths as dotted names with [i] indices', () => {
    expect(formatPath(['workflow', 'tasks', 0, 'script', 2])).toBe('workflow.tasks[0].script[2]');
    expect(formatPath([])).toBe('');
  });
});
