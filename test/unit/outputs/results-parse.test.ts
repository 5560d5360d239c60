import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { collectTaskResult, parseLogResult, resultFilePath } from '../../../src/outputs/results.js';
import { ResultsIndex } from '../../../src/outputs/results-index.js';
import { castValue } from '../../../src/outputs/cast.js';
import { PyFloat, stableJson, toPlain } from '../../../src/outputs/json-write.js';
import { compilePyRegex, translatePyRegex } from '../../../src/outputs/pyregex.js';
import type { PlannedResultPattern, PlannedTask } from '../../../src/plan/types.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-results-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function log(text: string): string {
  const p = join(dir, `log${++n}.log`);
  writeFileSync(p, text);
  return p;
}
const pat = (
  name: string,
  regex: string,
  over: Partial<PlannedResultPattern> = {},
): PlannedResultPattern => ({
  name,
  regex,
  type: 'auto',
  aggregate: 'last',
  required: false,
  ...over,
});
const plainValues = async (patterns: PlannedResultPattern[], text: string) => {
  const r = await parseLogResult(patterns, log(text));
  return { ...r, values: toPlain(r.values) as Record<string, unknown> };
};

describe('python regex translation', () => {
  it('translates named groups, back references, inline flags and \\A/\\Z', () => {
    expect(translatePyRegex('(?P<value>\\d+) (?P=value)')).toEqual({
      source: '(?<value>\\d+) \\k<value>',
      flags: '',
    });
    expect(translatePyRegex('(?i)abc')).toEqual({ source: 'abc', flags: 'i' });
    expect(compilePyRegex('\\Afoo\\Z').test('foo')).toBe(true);
    expect(compilePyRegex('\\Afoo\\Z').test('xfoo')).toBe(false);
    expect(translatePyRegex('[(?P<x>)]').source).toBe('[(?P<x>)]'); // inside a class: literal
    expect(() => compilePyRegex('(?x) a b')).toThrow(/verbose/);
    expect(() => compilePyRegex('(unclosed')).toThrow(/invalid regex/);
  });
});

describe('casting', () => {
  it('auto tries int, float, bool, json, then string', () => {
    expect(castValue('42', 'auto')).toEqual({ ok: true, value: 42 });
    expect(castValue('4.0', 'auto')).toEqual({ ok: true, value: new PyFloat(4) });
    expect(castValue('1e3', 'auto')).toEqual({ ok: true, value: new PyFloat(1000) });
    expect(castValue('True', 'auto')).toEqual({ ok: true, value: true });
    expect(castValue('{"a": 1}', 'auto')).toEqual({ ok: true, value: { a: 1 } });
    expect(castValue('[1,2]', 'auto')).toEqual({ ok: true, value: [1, 2] });
    expect(castValue('nan', 'auto')).toEqual({ ok: true, value: 'nan' });
    expect(castValue('12abc', 'auto')).toEqual({ ok: true, value: '12abc' });
  });
  it('explicit types report failures', () => {
    expect(castValue('x', 'int')).toMatchObject({ ok: false, error: expect.stringMatching(/to int/) });
    expect(castValue('1.5', 'int')).toMatchObject({ ok: false });
    expect(castValue('7', 'float')).toEqual({ ok: true, value: new PyFloat(7) });
    expect(castValue('yes', 'bool')).toEqual({ ok: true, value: true });
    expect(castValue('maybe', 'bool')).toMatchObject({ ok: false });
    expect(castValue('{bad', 'json')).toMatchObject({ ok: false });
    expect(castValue(' 12 ', 'string')).toEqual({ ok: true, value: ' 12 ' });
  });
  it('int round-trips any safe integer (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), (i) => {
        expect(castValue(String(i), 'auto')).toEqual({ ok: true, value: i });
      }),
    );
  });
});

describe('JSON writing', () => {
  it('sorts keys at every level, keeps float look, ends with a newline', () => {
    expect(stableJson({ b: 1, a: { d: new PyFloat(2), c: [new PyFloat(1.5), 'x'] } })).toBe(
      '{\n  "a": {\n    "c": [\n      1.5,\n      "x"\n    ],\n    "d": 2.0\n  },\n  "b": 1\n}\n',
    );
    expect(stableJson({})).toBe('{}\n');
    expect(stableJson(new PyFloat(1e-7))).toBe('1e-07\n');
  });
});

describe('log patterns', () => {
  it('group precedence: explicit, then value, then group 1, then whole match', async () => {
    const r = await plainValues(
      [
        pat('explicit', '(\\w+)=(\\d+)', { group: 2 }),
        pat('named', 'tps (?P<x>\\d+) (?P<value>\\d+)'),
        pat('byname', 'tps (?P<x>\\d+) (?P<value>\\d+)', { group: 'x' }),
        pat('first', 'lat (\\d+)'),
        pat('whole', 'lat \\d+'),
      ],
      'k=5\ntps 1 2\nlat 30\n',
    );
    expect(r.values).toEqual({ explicit: 5, named: 2, byname: 1, first: 30, whole: 'lat 30' });
    expect(r.errors).toEqual([]);
  });

  it('aggregates first/last/list/count/min/max/avg/sum', async () => {
    const text = 'v 3\nv 1.5\nv 4\nother\n';
    const aggs = ['first', 'last', 'list', 'count', 'min', 'max', 'avg', 'sum'] as const;
    const r = await plainValues(
      aggs.map((a) => pat(a, 'v ([\\d.]+)', { aggregate: a })),
      text,
    );
    expect(r.values).toEqual({
      first: 3,
      last: 4,
      list: [3, 1.5, 4],
      count: 3,
      min: 1.5,
      max: 4,
      avg: 8.5 / 3,
      sum: 8.5,
    });
    expect(r.matches.list.map((m) => m.line)).toEqual([1, 2, 3]);
  });

  it('numeric aggregates over text are errors; required misses set errors; optional misses are absent', async () => {
    const r = await plainValues(
      [
        pat('s', 'name (\\w+)', { aggregate: 'sum' }),
        pat('req', 'nope (\\d+)', { required: true }),
        pat('opt', 'nope (\\d+)'),
      ],
      'name abc\n',
    );
    expect(r.values).toEqual({});
    expect(r.errors).toEqual([
      expect.stringMatching(/^s: aggregate 'sum' needs numbers/),
      'req: required pattern did not match',
    ]);
  });

  it('lines end at \\n, \\r\\n and \\r (Python universal newlines)', async () => {
    const r = await plainValues(
      [pat('p', 'progress (\\d+)%', { aggregate: 'list' })],
      'progress 10%\rprogress 50%\r\nprogress 100%',
    );
    expect(r.values.p).toEqual([10, 50, 100]);
    expect(r.matches.p.map((m) => m.line)).toEqual([1, 2, 3]);
  });

  it('a missing log yields empty values and no error; a bad regex is an error', async () => {
    expect(await parseLogResult([pat('a', 'x')], join(dir, 'missing.log'))).toEqual({
      values: {},
      matches: {},
      errors: [],
    });
    const r = await parseLogResult([pat('bad', '(')], log('x'));
    expect(r.errors[0]).toMatch(/^bad: invalid regex/);
  });

  it('reads a large log in bounded chunks (many lines, a line split across chunks)', async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `step ${i} loss ${(1 / (i + 1)).toFixed(6)}`);
    const p = log(lines.join('\n') + '\nfinal ' + 'x'.repeat(3_000_000) + ' 77\n');
    const r = await parseLogResult(
      [
        pat('loss', 'loss ([\\d.]+)', { aggregate: 'count' }),
        pat('steps', '^step (\\d+)', { aggregate: 'max' }),
        pat('final', '^final x+ (\\d+)$'),
      ],
      p,
    );
    expect(toPlain(r.values)).toEqual({ loss: 50_000, steps: 49_999 });
    // the 3 MB line is cut to 1 MiB for matching, so the anchored pattern cannot see its end
    expect(r.matches.loss).toHaveLength(1000);
  });
});

function taskAt(name: string): PlannedTask {
  const outputDir = join(dir, name);
  mkdirSync(outputDir, { recursive: true });
  return { name, outputDir, logPath: join(outputDir, `${name}.log`), result: null } as unknown as PlannedTask;
}

describe('result.json', () => {
  it('writes the sflow.result.v1 document atomically with sorted keys', async () => {
    const t = taskAt('bench');
    writeFileSync(t.logPath, 'TTFT 41.5 ms\nTTFT 40.0 ms\n');
    const r = await collectTaskResult(t, {
      patterns: [pat('ttft', 'TTFT (?P<value>[\\d.]+) ms', { type: 'float', unit: 'ms', aggregate: 'last' })],
    });
    const text = readFileSync(join(t.outputDir, 'result.json'), 'utf8');
    expect(text).toContain('"ttft": 40.0');
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).toEqual([
      'errors',
      'matches',
      'metadata',
      'ok',
      'schema_version',
      'source',
      'status',
      'task',
      'values',
    ]);
    expect(doc).toEqual({
      schema_version: 'sflow.result.v1',
      task: 'bench',
      status: 'COMPLETED',
      ok: true,
      source: { type: 'log', path: 'bench.log' },
      values: { ttft: 40 },
      metadata: { ttft: { unit: 'ms', type: 'float', aggregate: 'last' } },
      matches: {
        ttft: [
          { line: 1, value: 41.5, text: 'TTFT 41.5 ms' },
          { line: 2, value: 40, text: 'TTFT 40.0 ms' },
        ],
      },
      errors: [],
    });
    expect(r.values).toEqual({ ttft: 40 });
  });

  it('file mode: a plain object becomes values; a v1 document is re-normalised in place', async () => {
    const a = taskAt('filemode');
    writeFileSync(join(a.outputDir, 'metrics.json'), '{"z": 1, "a": [1, 2]}');
    const r = await collectTaskResult(a, { patterns: [], file: 'metrics.json' });
    expect(r.doc).toMatchObject({
      ok: true,
      values: { z: 1, a: [1, 2] },
      source: { type: 'file', path: 'metrics.json' },
    });
    expect(readFileSync(join(a.outputDir, 'metrics.json'), 'utf8')).toBe('{"z": 1, "a": [1, 2]}'); // never touched

    const b = taskAt('inplace');
    writeFileSync(
      join(b.outputDir, 'result.json'),
      JSON.stringify({ schema_version: 'sflow.result.v1', values: { x: 2 }, task: 'wrong' }),
    );
    const rb = await collectTaskResult(b, { patterns: [], file: 'result.json' });
    expect(rb.doc).toMatchObject({ task: 'inplace', ok: true, values: { x: 2 } });
    expect(JSON.parse(readFileSync(join(b.outputDir, 'result.json'), 'utf8')).task).toBe('inplace');
  });

  it('file mode problems set ok=false without throwing', async () => {
    const t = taskAt('badfile');
    expect((await collectTaskResult(t, { patterns: [], file: 'absent.json' })).doc).toMatchObject({
      ok: false,
      errors: ['result file absent.json: not found'],
    });
    writeFileSync(join(t.outputDir, 'arr.json'), '[1]');
    expect((await collectTaskResult(t, { patterns: [], file: 'arr.json' })).doc.errors[0]).toMatch(
      /expected a JSON object/,
    );
    expect(resultFilePath(t.outputDir, '../x.json')).toBeUndefined();
    expect(resultFilePath(t.outputDir, '/etc/x.json')).toBeUndefined();
  });

  it('results.json lists every task with forward-slash relative paths', async () => {
    const idx = new ResultsIndex(dir, 'wf-123');
    await idx.add('b', {
      status: 'COMPLETED',
      ok: true,
      values: { v: new PyFloat(1) },
      resultPath: join(dir, 'b', 'result.json'),
    });
    await idx.add('a', {
      status: 'COMPLETED',
      ok: false,
      values: {},
      resultPath: join(dir, 'a', 'result.json'),
    });
    const text = readFileSync(join(dir, 'results.json'), 'utf8');
    expect(text).toContain('"v": 1.0');
    expect(JSON.parse(text)).toEqual({
      schema_version: 'sflow.results.v1',
      workflow: 'wf-123',
      tasks: {
        a: { status: 'COMPLETED', ok: false, result_file: 'a/result.json', values: {} },
        b: { status: 'COMPLETED', ok: true, result_file: 'b/result.json', values: { v: 1 } },
      },
    });
  });
});
