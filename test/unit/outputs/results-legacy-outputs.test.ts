import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compileTemplate,
  parseLegacyOutputs,
  writeLegacyOutputs,
} from '../../../src/outputs/legacy-outputs.js';
import { toPlain } from '../../../src/outputs/json-write.js';
import type { PlannedTask } from '../../../src/plan/types.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-outputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('legacy outputs templates', () => {
  it('compiles {name}, {name:d}, {name:f}, {name:w}, {name:w*} and literal braces', () => {
    const t = compileTemplate('a {x:d} b {y:f} c {z:w}{e:w*} {{lit}} {rest}');
    const m = t.re.exec('a -12 b 3.5 c word_1 {lit} any thing');
    expect(m?.slice(1)).toEqual(['-12', '3.5', 'word_1', '', 'any thing']);
    expect(t.fields.map((f) => f.name)).toEqual(['x', 'y', 'z', 'e', 'rest']);
    expect(compileTemplate('v={v:f}').re.test('v=3')).toBe(false); // f needs a decimal point
    expect(compileTemplate('v={v:d}').re.test('v=3 extra')).toBe(false); // whole line
    expect(compileTemplate('A.B {x}').re.test('AxB 1')).toBe(false); // literal text is escaped
  });

  it('parses example 10: scalar once, list when several, first matching template wins', async () => {
    const p = join(dir, 'bench.log');
    writeFileSync(
      p,
      '{"model": "tiny"}\nscratch=/tmp\nTTFT 41.5 ms\nTTFT 40.5 ms\nthroughput 1234.5 tok/s\nbatch=16 model=tiny\n2026-01-01 10:00:00,123 - sflow.task.bench - INFO - TTFT 39.5 ms\n',
    );
    const specs = [
      { pattern: 'TTFT {ttft:f} ms', source: 'stdout' },
      { pattern: 'throughput {tps:f} tok/s', source: 'stdout' },
      { pattern: 'batch={batch:d} model={model}', source: 'stdout' },
    ];
    expect(toPlain(await parseLegacyOutputs(specs, p))).toEqual({
      ttft: [41.5, 40.5, 39.5],
      tps: 1234.5,
      batch: 16,
      model: 'tiny',
    });
  });

  it('writes outputs.json with task, specs and sorted keys; a missing log gives {}', async () => {
    const outputDir = join(dir, 'nolog');
    mkdirSync(outputDir);
    const task = {
      name: 'nolog',
      outputDir,
      logPath: join(outputDir, 'nolog.log'),
      outputs: [{ pattern: 'x {a}', source: 'stdout' }],
    } as unknown as PlannedTask;
    const r = await writeLegacyOutputs(task);
    expect(r.warning).toMatch(/could not parse outputs/);
    expect(readFileSync(join(outputDir, 'outputs.json'), 'utf8')).toBe(
      '{\n  "outputs": {},\n  "specs": [\n    {\n      "pattern": "x {a}",\n      "source": "stdout"\n    }\n  ],\n  "task": "nolog"\n}\n',
    );
  });
});
