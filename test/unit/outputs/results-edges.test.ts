/**
 * The edges of result parsing (issue 31's mutation run on src/outputs/results.ts): which capture
 * group a pattern names and the errors when it names none, cast errors, the order of errors over
 * several patterns, line numbers across match batches, unreadable logs and result files, and a
 * result.json that cannot be written. Each expectation is exact: the texts are what a user reads.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectTaskResult, parseLogResult, resultFilePath } from '../../../src/outputs/results.js';
import { toPlain } from '../../../src/outputs/json-write.js';
import type { PlannedResultPattern, PlannedTask } from '../../../src/plan/types.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-results-edges-'));
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
): PlannedResultPattern => ({ name, regex, type: 'auto', aggregate: 'last', required: false, ...over });

async function parse(patterns: PlannedResultPattern[], text: string) {
  const r = await parseLogResult(patterns, log(text));
  return { ...r, values: toPlain(r.values) as Record<string, unknown> };
}

function taskAt(name: string): PlannedTask {
  const outputDir = join(dir, name);
  mkdirSync(outputDir, { recursive: true });
  return { name, outputDir, logPath: join(outputDir, `${name}.log`), result: null } as unknown as PlannedTask;
}

describe('capture groups', () => {
  it('a group number given as text is a number; one past the last group is an error', async () => {
    const r = await parse(
      [
        pat('second', '(\\w+)=(\\d+)', { group: '2' }),
        pat('third', '(\\w+)=(\\d+)', { group: 3 }),
        pat('tenth', '(\\w+)=(\\d+)', { group: '10' }),
      ],
      'k=5\n',
    );
    expect(r.values).toEqual({ second: 5 });
    expect(r.errors).toEqual(['third: regex has no group 3', 'tenth: regex has no group 10']);
  });

  it('a group name that is not all digits is a name, and a missing name is an error', async () => {
    const r = await parse(
      [
        pat('x1', '(?P<v>\\d+)', { group: 'x1' }),
        pat('1x', '(?P<v>\\d+)', { group: '1x' }),
        pat('named', '(?P<v>\\d+)', { group: 'v' }),
      ],
      'n 7\n',
    );
    expect(r.values).toEqual({ named: 7 });
    expect(r.errors).toEqual(["x1: regex has no group named 'x1'", "1x: regex has no group named '1x'"]);
  });

  it('an empty or null group means no group: `value`, else group 1, else the whole match', async () => {
    const r = await parse(
      [
        pat('empty', 'a (\\d+) (\\d+)', { group: '' }),
        pat('nul', 'a (\\d+) (\\d+)', { group: null as unknown as string }),
        pat('whole', 'a \\d+', { group: '' }),
      ],
      'a 1 2\n',
    );
    expect(r.errors).toEqual([]);
    expect(r.values).toEqual({ empty: 1, nul: 1, whole: 'a 1' });
  });
});

describe('errors while parsing a log', () => {
  it('a value that does not cast is reported once, at its first line; a required one is missing then', async () => {
    const r = await parse(
      [pat('n', 'n=(\\S+)', { type: 'int', required: true }), pat('ok', 'n=(\\d+)', { aggregate: 'list' })],
      'n=1.5\nn=x\nn=3\n',
    );
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^n: line 1: /);
    expect(r.values).toEqual({ n: 3, ok: [1, 3] }); // `\\d+` takes the 1 of 1.5
    const missing = await parse([pat('m', 'm=(\\S+)', { type: 'int', required: true })], 'm=x\nm=y\n');
    expect(missing.errors).toHaveLength(2);
    expect(missing.errors[0]).toMatch(/^m: line 1: /);
    expect(missing.errors[1]).toBe('m: required value missing');
  });

  it('errors of several patterns come in line order, then pattern order', async () => {
    const r = await parse(
      [
        pat('late', 'b=(\\S+)', { type: 'int' }),
        pat('early', 'a=(\\S+)', { type: 'int' }),
        pat('same', 'b=(\\S+)', { type: 'float' }),
      ],
      'a=x\nfiller\nb=y\n',
    );
    expect(r.errors.map((e) => e.split(':').slice(0, 2).join(':'))).toEqual([
      'early: line 1',
      'late: line 3',
      'same: line 3',
    ]);
  });

  it('line numbers run on across match batches (more than 4,096 lines, and lines past 1 MiB)', async () => {
    const lines = Array.from({ length: 9000 }, (_, i) => (i === 4999 ? 'hit 5000' : `l${i}`));
    const r = await parse([pat('hit', 'hit (\\d+)'), pat('none', 'never (\\d+)')], lines.join('\n') + '\n');
    expect(r.values).toEqual({ hit: 5000 });
    expect(r.matches.hit).toEqual([{ line: 5000, value: 5000, text: 'hit 5000' }]);
    expect(Object.keys(r.matches)).toEqual(['hit']); // a pattern that never matched has no trace
    const big = 'y'.repeat(300_000);
    const wide = await parse([pat('w', '^w (\\d+)$')], `${big}\n${big}\n${big}\n${big}\nw 5\n${big}\nw 7\n`);
    expect(wide.matches.w?.map((m) => m.line)).toEqual([5, 7]);
  });

  it('a log that cannot be read is an error; a missing one is not; no valid pattern reads nothing', async () => {
    const folder = join(dir, 'a-folder.log');
    mkdirSync(folder, { recursive: true });
    const r = await parseLogResult([pat('a', 'x')], folder);
    expect(r.values).toEqual({});
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^cannot read log: .*EISDIR/);
    const onlyBad = await parseLogResult([pat('bad', '(')], folder);
    expect(onlyBad.errors).toHaveLength(1);
    expect(onlyBad.errors[0]).toMatch(/^bad: invalid regex/);
  });

  it('a pattern stopped at its deadline is reported once and not run on later batches', async () => {
    const evil = 'a'.repeat(40) + '!';
    const lines = Array.from({ length: 4200 }, (_, i) => (i === 1 || i === 4150 ? evil : `v ${i}`));
    const r = await parse(
      [pat('slow', '^(a+)+$'), pat('v', '^v (\\d+)$', { aggregate: 'count' })],
      lines.join('\n'),
    );
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^slow: regular expression .* was stopped/);
    expect(r.values).toEqual({ v: 4198 });
  }, 30_000);
});

describe('result file paths', () => {
  it('refuses absolute paths and any `..` segment, accepts names that only start with dots', () => {
    const out = join(dir, 'paths');
    expect(resultFilePath(out, '/etc/x.json')).toBeUndefined();
    expect(resultFilePath(out, '..')).toBeUndefined();
    expect(resultFilePath(out, '../x.json')).toBeUndefined();
    expect(resultFilePath(out, 'a/../../x.json')).toBeUndefined();
    expect(resultFilePath(out, '..metrics.json')).toBe(join(out, '..metrics.json'));
    expect(resultFilePath(out, 'sub/..x/m.json')).toBe(join(out, 'sub', '..x', 'm.json'));
    expect(resultFilePath(out, 'a/../m.json')).toBe(join(out, 'm.json'));
  });
});

describe('file mode problems', () => {
  it('each problem has its own message and makes the result not ok', async () => {
    const t = taskAt('filebad');
    const doc = async (file: string) => (await collectTaskResult(t, { patterns: [], file })).doc;
    expect(await doc('/abs.json')).toMatchObject({
      ok: false,
      values: {},
      errors: ['result file must be relative to the task output dir: /abs.json'],
    });
    mkdirSync(join(t.outputDir, 'folder.json'));
    const folder = await doc('folder.json');
    expect(folder.ok).toBe(false);
    expect(folder.errors).toHaveLength(1);
    expect(folder.errors[0]).toMatch(/^result file folder\.json: .*EISDIR/);
    writeFileSync(join(t.outputDir, 'bad.json'), '{"a": ');
    const bad = await doc('bad.json');
    expect(bad.ok).toBe(false);
    expect(bad.errors[0]).toMatch(/^result file bad\.json: invalid JSON: /);
    for (const [file, text] of [
      ['null.json', 'null'],
      ['num.json', '5'],
      ['str.json', '"text"'],
    ] as const) {
      writeFileSync(join(t.outputDir, file), text);
      expect(await doc(file)).toMatchObject({
        ok: false,
        errors: [`result file ${file}: expected a JSON object`],
      });
    }
  });

  it('a sflow.result.v1 file: its ok=false and errors are kept, malformed parts are refused', async () => {
    const t = taskAt('filev1');
    const write = (file: string, v: unknown) => writeFileSync(join(t.outputDir, file), JSON.stringify(v));
    const doc = async (file: string) => (await collectTaskResult(t, { patterns: [], file })).doc;
    write('notok.json', { schema_version: 'sflow.result.v1', ok: false, values: { a: 1 } });
    expect(await doc('notok.json')).toMatchObject({ ok: false, errors: [], values: { a: 1 } });
    write('ok.json', {
      schema_version: 'sflow.result.v1',
      ok: true,
      values: { a: 2 },
      metadata: [1],
      matches: 'x',
    });
    expect(await doc('ok.json')).toMatchObject({
      ok: true,
      errors: [],
      values: { a: 2 },
      metadata: {},
      matches: {},
    });
    write('errs.json', { schema_version: 'sflow.result.v1', values: {}, errors: ['from the task', 7] });
    expect(await doc('errs.json')).toMatchObject({ ok: false, errors: ['from the task', '7'] });
    for (const values of [[1, 2], null, 'x']) {
      write('vals.json', { schema_version: 'sflow.result.v1', values });
      expect(await doc('vals.json')).toMatchObject({
        ok: false,
        values: {},
        errors: ["result file vals.json: 'values' must be an object"],
      });
    }
    write('meta.json', {
      schema_version: 'sflow.result.v1',
      values: { a: 1 },
      metadata: { a: { unit: 'ms', type: 'int', aggregate: 'last' } },
      matches: { a: [{ line: 1 }] },
    });
    expect(await doc('meta.json')).toMatchObject({
      ok: true,
      metadata: { a: { unit: 'ms', type: 'int', aggregate: 'last' } },
      matches: { a: [{ line: 1 }] },
    });
  });
});

describe('result.json', () => {
  it('a log mode result with errors is not ok', async () => {
    const t = taskAt('logerr');
    writeFileSync(t.logPath, 'nothing here\n');
    const r = await collectTaskResult(t, { patterns: [pat('need', 'x=(\\d+)', { required: true })] });
    expect(r.doc.ok).toBe(false);
    expect(r.doc.errors).toEqual(['need: required pattern did not match']);
    expect(r.path).toBe(join(t.outputDir, 'result.json'));
  });

  it('a result.json that cannot be written makes the result not ok and has no path', async () => {
    const outputDir = join(dir, 'a-file');
    writeFileSync(outputDir, 'not a folder');
    const t = {
      name: 'nowrite',
      outputDir,
      logPath: join(dir, 'nowrite.log'),
      result: null,
    } as unknown as PlannedTask;
    writeFileSync(t.logPath, 'v=1\n');
    const r = await collectTaskResult(t, { patterns: [pat('v', 'v=(\\d+)')] });
    expect(r.path).toBeUndefined();
    expect(r.doc.ok).toBe(false);
    expect(r.doc.errors).toHaveLength(1);
    expect(r.doc.errors[0]).toMatch(/^cannot write result\.json: /);
    expect(r.values).toEqual({ v: 1 });
  });
});
