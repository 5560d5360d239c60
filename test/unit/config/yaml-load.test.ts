/** YAML text → plain values with positions; scalars read like PyYAML; errors located. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../../helpers/scratch.js';
import { SflowError } from '../../../src/config/errors.js';
import { entryOrigin, getOrigin, isYamlFloat, locateInText } from '../../../src/config/source.js';
import { parseYamlText, readYamlFile } from '../../../src/config/yaml-load.js';

type Obj = Record<string, unknown>;

const parse = (text: string): Obj => parseYamlText(text, 'r.yaml').value;

/** The SflowError thrown by `fn` (fails the test when nothing or something else is thrown). */
function thrown(fn: () => unknown): SflowError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected an SflowError');
}

describe('positions', () => {
  const text = [
    'version: "0.1"',
    'workflow:',
    '  name: w',
    '  tasks:',
    '    - name: a',
    '      script:',
    '        - echo hi',
    '',
  ].join('\n');
  const doc = parse(text);

  it('registers the key and the value of every mapping entry (1-based line and column)', () => {
    expect(entryOrigin(doc, 'version')).toEqual({
      key: { file: 'r.yaml', line: 1, col: 1 },
      value: { file: 'r.yaml', line: 1, col: 10 },
    });
    const wf = doc.workflow as Obj;
    expect(entryOrigin(wf, 'name')).toEqual({
      key: { file: 'r.yaml', line: 3, col: 3 },
      value: { file: 'r.yaml', line: 3, col: 9 },
      text: { file: 'r.yaml', line: 3, col: 9 },
    });
    expect(getOrigin(wf)?.self).toEqual({ file: 'r.yaml', line: 3, col: 3 });
  });

  it('registers every sequence item', () => {
    const task = ((doc.workflow as Obj).tasks as Obj[])[0];
    expect(entryOrigin((doc.workflow as Obj).tasks, 0)?.value).toEqual({ file: 'r.yaml', line: 5, col: 7 });
    expect(entryOrigin(task.script, 0)?.value).toEqual({ file: 'r.yaml', line: 7, col: 11 });
  });

  it('records where the characters of a string start when they map one to one onto the file', () => {
    const d = parse(
      [
        'a: plain text',
        'b: "quoted"',
        'c: |',
        '',
        '    line one',
        '    line ${{ two }}',
        'd: >',
        '  folded',
        'e: 5',
        'f:',
        '  - item',
        '',
      ].join('\n'),
    );
    expect(entryOrigin(d, 'a')?.text).toEqual({ file: 'r.yaml', line: 1, col: 4 });
    expect(entryOrigin(d, 'b')?.text).toBeUndefined();
    expect(entryOrigin(d, 'c')?.text).toEqual({ file: 'r.yaml', line: 4, col: 5 });
    expect(entryOrigin(d, 'd')?.text).toBeUndefined();
    expect(entryOrigin(d, 'e')?.text).toBeUndefined();
    expect(entryOrigin(d.f, 0)?.text).toEqual({ file: 'r.yaml', line: 11, col: 5 });
    // an offset inside the block maps back to its line and column
    const c = d.c as string;
    expect(locateInText(entryOrigin(d, 'c'), c, c.indexOf('${{'))).toEqual({
      file: 'r.yaml',
      line: 6,
      col: 10,
    });
    expect(locateInText(entryOrigin(d, 'a'), d.a as string, 6)).toEqual({ file: 'r.yaml', line: 1, col: 10 });
    expect(locateInText(entryOrigin(d, 'b'), d.b as string, 1)).toBeUndefined();
  });

  it('points an entry without a value at the end of its key', () => {
    const d = parse('a:\nb: 1\n');
    expect(d.a).toBeNull();
    expect(entryOrigin(d, 'a')?.key).toEqual({ file: 'r.yaml', line: 1, col: 1 });
    expect(entryOrigin(d, 'a')?.value?.line).toBe(1);
  });
});

describe('scalars like PyYAML (YAML 1.1)', () => {
  it('reads yes/no/on/off/true/false in any usual case as booleans', () => {
    expect(parse('a: yes\nb: on\nc: No\nd: OFF\ne: True\nf: FALSE\n')).toEqual({
      a: true,
      b: true,
      c: false,
      d: false,
      e: true,
      f: false,
    });
  });

  it('keeps y, Y, n, N as strings, and unusual casings too', () => {
    expect(parse('a: y\nb: Y\nc: n\nd: N\ne: tRUE\n')).toEqual({ a: 'y', b: 'Y', c: 'n', d: 'N', e: 'tRUE' });
  });

  it('keeps keys as written: `N:` and `yes:` are names, not booleans', () => {
    const d = parse('N: 1\nyes: 2\n1: 3\nnull: 4\n"q": 5\n');
    // (a JS object lists integer-like keys first; the file order lives in the position registry)
    expect(Object.keys(d).sort()).toEqual(['1', 'N', 'null', 'q', 'yes']);
    expect([...getOrigin(d)!.entries.keys()]).toEqual(['N', 'yes', '1', 'null', 'q']);
    expect(d.N).toBe(1);
  });

  it('keeps H:MM:SS and M:SS as text, not sexagesimal numbers', () => {
    expect(parse('t: 1:30:00\nu: 1:30\nv: "2:00"\n')).toEqual({ t: '1:30:00', u: '1:30', v: '2:00' });
  });

  it('reads YAML 1.1 integers (octal, hex, binary, underscores)', () => {
    expect(parse('a: 017\nb: 0x1F\nc: 0b101\nd: 1_000\ne: +12\n')).toEqual({
      a: 15,
      b: 31,
      c: 5,
      d: 1000,
      e: 12,
    });
  });

  it('flags floats written with a dot, since a JS number cannot tell 3.0 from 3', () => {
    const d = parse('f: 3.0\ng: 3\nh: 1.5e+3\ni: .5\nj: .inf\nk: 0x1E\nl: [1.0, 2]\n');
    expect(d).toMatchObject({ f: 3, g: 3, h: 1500, i: 0.5, j: Infinity, k: 30 });
    expect(['f', 'g', 'h', 'i', 'j', 'k'].map((k) => isYamlFloat(d, k))).toEqual([
      true,
      false,
      true,
      true,
      true,
      false,
    ]);
    expect([isYamlFloat(d.l, 0), isYamlFloat(d.l, 1)]).toEqual([true, false]);
  });

  it('keeps float spellings PyYAML does not know as text (exponent without sign or dot)', () => {
    expect(parse('a: 1e3\nb: 1.0e3\nc: -.5\nd: 1e-4\n')).toEqual({
      a: '1e3',
      b: '1.0e3',
      c: '-.5',
      d: '1e-4',
    });
  });

  it('keeps timestamps as the text written', () => {
    expect(parse('d: 2024-01-01\nt: 2024-01-01 10:00:00\n')).toEqual({
      d: '2024-01-01',
      t: '2024-01-01 10:00:00',
    });
  });

  it('reads ~, null, empty values as null and resolves aliases', () => {
    expect(parse('a: ~\nb: null\nc:\nd: &x [1, 2]\ne: *x\n')).toEqual({
      a: null,
      b: null,
      c: null,
      d: [1, 2],
      e: [1, 2],
    });
  });
});

describe('warnings and errors', () => {
  it('warns about a duplicate key at the later key, and the later value wins', () => {
    const p = parseYamlText('a: 1\nb: 2\na: 3\n', 'r.yaml');
    expect((p.value as Obj).a).toBe(3);
    expect(p.warnings).toEqual([
      { message: "duplicate key 'a': the later value wins", location: { file: 'r.yaml', line: 3, col: 1 } },
    ]);
  });

  it('rejects an empty file or a file with only comments', () => {
    for (const text of ['', '\n\n', '# nothing here\n']) {
      const e = thrown(() => parseYamlText(text, 'e.yaml'));
      expect(e.code).toBe('config.empty');
      expect(e.message).toContain('configuration file is empty');
      expect(e.location).toEqual({ file: 'e.yaml', line: 1, col: 1 });
    }
  });

  it('rejects a document that is not a mapping, located at its start', () => {
    for (const text of ['- a\n- b\n', 'just text\n', '\n\n42\n']) {
      const e = thrown(() => parseYamlText(text, 'e.yaml'));
      expect(e.code).toBe('config.not_mapping');
      expect(e.location?.file).toBe('e.yaml');
    }
    expect(thrown(() => parseYamlText('\n\n42\n', 'e.yaml')).location?.line).toBe(3);
  });

  it('locates YAML syntax errors and gives a hint', () => {
    const cases: [string, number][] = [
      ['a:\n  b: 1\n c: 2\n', 3],
      ['a: 1\nb: [1, 2\n', 2],
      ['a: 1\nb: {x: 1\n', 2],
      ['a: 1\nb: "open\n', 2],
      ['a:\n\t- x\n', 2],
    ];
    for (const [text, line] of cases) {
      const e = thrown(() => parseYamlText(text, 's.yaml'));
      expect(e.code, text).toBe('config.yaml_syntax');
      expect(e.message).toMatch(/^invalid YAML: /);
      expect(e.message).not.toMatch(/at line \d+/);
      expect(e.location?.file).toBe('s.yaml');
      expect(e.location?.line, text).toBe(line);
      expect(e.hint).toBeTruthy();
      expect(e.phase).toBe('load');
    }
  });

  it('an error found at the end of the input points at the last written character', () => {
    // `[a, b` never closed: the parser reports the end of the input; the b (line 2, col 14) is shown
    const cases: [string, number, number][] = [
      ['workflow:\n  tasks: [a, b', 2, 14],
      ['workflow:\n  tasks: [a, b\n', 2, 14],
      ['workflow:\n  tasks: [a, b\n\n  \n\n', 2, 14],
      ['a: {x: 1', 1, 8],
      ['a: 1\nb: "open\n\n\n', 2, 8],
    ];
    for (const [text, line, col] of cases) {
      const e = thrown(() => parseYamlText(text, 's.yaml'));
      expect(e.code, text).toBe('config.yaml_syntax');
      expect(e.location, JSON.stringify(text)).toEqual({ file: 's.yaml', line, col });
    }
  });

  it('reads files; a missing file is a usage-level error (exit 2)', () => {
    const dir = scratchDir('sflow-yaml-');
    const f = join(dir, 'a.yaml');
    writeFileSync(f, 'workflow:\n  name: w\n');
    expect(readYamlFile(f).value).toEqual({ workflow: { name: 'w' } });
    expect(entryOrigin(readYamlFile(f).value, 'workflow')?.key?.file).toBe(f);
    const e = thrown(() => readYamlFile(join(dir, 'missing.yaml')));
    expect(e.code).toBe('config.file_not_found');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('missing.yaml');
  });
});
