/** `--set NAME=VALUE` (type inference, list → domain) and `--artifact NAME=URI`. */
import { describe, expect, it } from 'vitest';
import { normaliseCollections } from '../../../src/config/collections.js';
import { SflowError } from '../../../src/config/errors.js';
import { applyArtifactOverrides, applySetOverrides, parseSetValue } from '../../../src/config/overrides.js';
import { entryOrigin, isYamlFloat } from '../../../src/config/source.js';
import { parseYamlText } from '../../../src/config/yaml-load.js';

type Obj = Record<string, unknown>;

function doc(text: string): Obj {
  return normaliseCollections(parseYamlText(text, 'o.yaml').value);
}

function thrown(fn: () => unknown): SflowError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected an SflowError');
}

const BASE =
  'variables:\n  PORT: 8000\n  MODEL: {value: llama, domain: [llama, qwen]}\n  RATE: 0.5\nartifacts:\n  cfg: {uri: "file://c.json", content: "{}"}\n  weights: {uri: "fs:///w"}\nworkflow:\n  name: w\n  variables: {LOCAL: 1}\n  tasks: {t: {script: [x]}}\n';

describe('--set type inference, in order', () => {
  it('1. JSON lists and mappings (after trimming)', () => {
    expect(parseSetValue('[1, 2, "a"]')).toEqual({ value: [1, 2, 'a'], isFloat: false });
    expect(parseSetValue(' {"a": {"b": [true]}} ')).toEqual({ value: { a: { b: [true] } }, isFloat: false });
    // not JSON: falls through to a string
    expect(parseSetValue('[1, 2')).toEqual({ value: '[1, 2', isFloat: false });
    expect(parseSetValue("{'a': 1}")).toEqual({ value: "{'a': 1}", isFloat: false });
  });

  it('2. integers, like Python int() (leading zeros, sign, underscores)', () => {
    expect(parseSetValue('007')).toEqual({ value: 7, isFloat: false });
    expect(parseSetValue('-12')).toEqual({ value: -12, isFloat: false });
    expect(parseSetValue('+3')).toEqual({ value: 3, isFloat: false });
    expect(parseSetValue('1_000')).toEqual({ value: 1000, isFloat: false });
  });

  it('3. floats, flagged so they render like Python floats', () => {
    expect(parseSetValue('1e3')).toEqual({ value: 1000, isFloat: true });
    expect(parseSetValue('2.0')).toEqual({ value: 2, isFloat: true });
    expect(parseSetValue('.5')).toEqual({ value: 0.5, isFloat: true });
    expect(parseSetValue('-1.5E-2')).toEqual({ value: -0.015, isFloat: true });
    expect(parseSetValue('inf').value).toBe(Infinity);
    expect(parseSetValue('-inf').value).toBe(-Infinity);
    expect(Number.isNaN(parseSetValue('nan').value)).toBe(true);
  });

  it('4. booleans true/yes/on and false/no/off, any case', () => {
    for (const t of ['true', 'True', 'YES', 'on']) expect(parseSetValue(t).value, t).toBe(true);
    for (const f of ['false', 'No', 'OFF']) expect(parseSetValue(f).value, f).toBe(false);
  });

  it('5. anything else is the string as given, possibly empty', () => {
    expect(parseSetValue('llama-3')).toEqual({ value: 'llama-3', isFloat: false });
    expect(parseSetValue('')).toEqual({ value: '', isFloat: false });
    expect(parseSetValue('a=b')).toEqual({ value: 'a=b', isFloat: false });
    expect(parseSetValue('y').value).toBe('y');
  });
});

describe('applySetOverrides', () => {
  it('replaces the value of a declared top-level variable, splitting at the first =', () => {
    const d = doc(BASE);
    const applied = applySetOverrides(d, ['PORT=9000', 'MODEL=qwen', 'RATE=1.0']);
    const vars = d.variables as Obj[];
    expect(vars.map((v) => v.value)).toEqual([9000, 'qwen', 1]);
    expect(vars[1].domain).toEqual(['llama', 'qwen']); // the domain is kept
    expect(isYamlFloat(vars[2], 'value')).toBe(true);
    expect(isYamlFloat(vars[0], 'value')).toBe(false);
    expect(applied.map((a) => [a.key, a.raw, a.isDomain])).toEqual([
      ['PORT', '9000', false],
      ['MODEL', 'qwen', false],
      ['RATE', '1.0', false],
    ]);
    const e = doc(BASE);
    applySetOverrides(e, ['MODEL=a=b']);
    expect((e.variables as Obj[])[1].value).toBe('a=b');
  });

  it('a list becomes the domain and its first element the value (a sweep from the CLI)', () => {
    const d = doc(BASE);
    const [a] = applySetOverrides(d, ['PORT=[1, 2, 3]']);
    expect((d.variables as Obj[])[0]).toMatchObject({ name: 'PORT', value: 1, domain: [1, 2, 3] });
    expect(a).toMatchObject({ key: 'PORT', isDomain: true, value: [1, 2, 3] });
    // an empty list leaves the value (the domain check then fails at validation)
    const e = doc(BASE);
    applySetOverrides(e, ['PORT=[]']);
    expect((e.variables as Obj[])[0]).toMatchObject({ value: 8000, domain: [] });
  });

  it('keeps the file position of the value it replaced (errors still point into the recipe)', () => {
    const d = doc(BASE);
    applySetOverrides(d, ['PORT=1']);
    const v = (d.variables as Obj[])[0];
    expect(v.value).toBe(1);
    expect(entryOrigin(v, 'value')?.value).toEqual({ file: 'o.yaml', line: 2, col: 9 });
    // a domain given on the command line is located at the --set argument
    applySetOverrides(d, ['MODEL=["a"]']);
    expect(entryOrigin((d.variables as Obj[])[1], 'domain')?.value).toEqual({
      file: '--set',
      line: 1,
      col: 7,
    });
  });

  it('an unknown variable is a usage error (exit 2) with a did-you-mean hint', () => {
    const e = thrown(() => applySetOverrides(doc(BASE), ['PROT=1']));
    expect(e.code).toBe('cli.set_unknown_variable');
    expect(e.message).toBe("Variable 'PROT' specified in overrides is not defined in the configuration.");
    expect(e.hint).toBe("did you mean 'PORT'?");
    expect(e.exitCode).toBe(2);
    expect(thrown(() => applySetOverrides(doc(BASE), ['ZZZZZZ=1'])).hint).toBe(
      'declared variables: PORT, MODEL, RATE',
    );
    expect(thrown(() => applySetOverrides(doc('workflow: {name: w}\n'), ['A=1'])).hint).toMatch(
      /declares no top-level variables/,
    );
  });

  it('a workflow variable cannot be set, and the hint says why', () => {
    const e = thrown(() => applySetOverrides(doc(BASE), ['LOCAL=2']));
    expect(e.message).toContain('not defined in the configuration');
    expect(e.hint).toMatch(/workflow variable/);
  });

  it('an argument without NAME= is a format error', () => {
    for (const bad of ['PORT', '=5', '']) {
      const e = thrown(() => applySetOverrides(doc(BASE), [bad]));
      expect(e.code, bad).toBe('cli.bad_override');
      expect(e.message).toBe(`Invalid variable override format '${bad}'. Expected KEY=VALUE.`);
    }
  });
});

describe('applyArtifactOverrides', () => {
  it('replaces the uri; leaving file:// drops the inline content', () => {
    const d = doc(BASE);
    expect(applyArtifactOverrides(d, ['cfg=fs:///data/c.json', 'weights=hf://org/model'])).toEqual([
      { name: 'cfg', uri: 'fs:///data/c.json' },
      { name: 'weights', uri: 'hf://org/model' },
    ]);
    expect(d.artifacts).toEqual([
      { name: 'cfg', uri: 'fs:///data/c.json' },
      { name: 'weights', uri: 'hf://org/model' },
    ]);
  });

  it('staying on file:// keeps the content', () => {
    const d = doc(BASE);
    applyArtifactOverrides(d, ['cfg=file://other.json']);
    expect((d.artifacts as Obj[])[0]).toEqual({ name: 'cfg', uri: 'file://other.json', content: '{}' });
  });

  it('unknown artifact and missing = are errors', () => {
    const e = thrown(() => applyArtifactOverrides(doc(BASE), ['weight=fs:///x']));
    expect(e.code).toBe('cli.artifact_unknown');
    expect(e.message).toContain("Artifact 'weight' specified in overrides is not defined");
    expect(e.hint).toBe("did you mean 'weights'?");
    const f = thrown(() => applyArtifactOverrides(doc(BASE), ['weights']));
    expect(f.message).toBe("Invalid artifact override format 'weights'. Expected NAME=URI.");
  });
});

describe('--set integers beyond 2^53', () => {
  it('are refused instead of silently rounded', () => {
    for (const raw of ['99999999999999999999', '[1, 9007199254740993]', '{"a": {"b": -9007199254740993}}']) {
      const e = thrown(() => parseSetValue(raw));
      expect(e.code, raw).toBe('cli.int_range');
      expect(e.message).toContain('beyond ±2^53');
    }
    expect(parseSetValue('9007199254740991').value).toBe(9007199254740991);
    expect(parseSetValue('["99999999999999999999"]').value).toEqual(['99999999999999999999']);
  });
});
