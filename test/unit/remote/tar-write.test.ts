import { execFileSync } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTar } from '../../../src/remote/tar-write.js';
import { isLogFile } from '../../../src/remote/agent/pack.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-tar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tar writer', () => {
  it('writes an archive that system tar unpacks byte for byte, long names and empty files included', async () => {
    const src = join(dir, 'src');
    mkdirSync(src);
    const long = `${'d'.repeat(80)}/${'f'.repeat(90)}.log`;
    const files: Record<string, Buffer> = {
      'recipe.yaml': Buffer.from('version: "0.1"\n'),
      'empty.txt': Buffer.alloc(0),
      'bin.dat': Buffer.from(Array.from({ length: 70_001 }, (_, i) => i % 251)),
      [long]: Buffer.from('deep\n'),
    };
    const entries = Object.entries(files).map(([name, data], i) => {
      const file = join(src, `f${i}`);
      writeFileSync(file, data);
      return { name, file };
    });
    const tarFile = join(dir, 'a.tar');
    const out = createWriteStream(tarFile);
    expect(await writeTar(out, entries)).toBe(70_001 + 15 + 5);
    out.end();
    await once(out, 'close');
    const dest = join(dir, 'dest');
    mkdirSync(dest);
    execFileSync('tar', ['-xf', tarFile, '-C', dest]);
    for (const [name, data] of Object.entries(files)) expect(readFileSync(join(dest, name))).toEqual(data);
  });

  it('an entry given by its bytes is written from memory, mode 0600, next to file entries', async () => {
    const src = join(dir, 'mem-src');
    mkdirSync(src);
    writeFileSync(join(src, 'on-disk'), 'from a file\n');
    const tarFile = join(dir, 'mem.tar');
    const out = createWriteStream(tarFile);
    const data = Buffer.from('variables:\n  HF_TOKEN: hf_value\n');
    const long = `${'m'.repeat(120)}.yaml`;
    expect(
      await writeTar(out, [
        { name: 'recipe.yaml', data },
        { name: 'empty.yaml', data: Buffer.alloc(0) },
        { name: long, data: Buffer.from('x'.repeat(513)) },
        { name: 'workspace/in.txt', file: join(src, 'on-disk') },
      ]),
    ).toBe(data.length + 513 + 12);
    out.end();
    await once(out, 'close');
    const dest = join(dir, 'mem-dest');
    mkdirSync(dest);
    execFileSync('tar', ['-xpf', tarFile, '-C', dest]);
    expect(readFileSync(join(dest, 'recipe.yaml'))).toEqual(data);
    expect(statSync(join(dest, 'recipe.yaml')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dest, 'empty.yaml'), 'utf8')).toBe('');
    expect(readFileSync(join(dest, long), 'utf8')).toBe('x'.repeat(513));
    expect(readFileSync(join(dest, 'workspace', 'in.txt'), 'utf8')).toBe('from a file\n');
  });

  it('the logs set of fetch: logs, results, monitor and the report, not other outputs', () => {
    for (const f of [
      'controller.log',
      'run1/sflow_summary.log',
      'run1/sflow.log',
      'run1/bash_cmds.log',
      'run1/events.jsonl',
      'run1/report.html',
      'run1/results.json',
      'run1/srv/srv.log',
      'run1/srv/result.json',
      'run1/sflow_monitor/lifecycle/workflow/timeline.csv',
    ])
      expect([f, isLogFile(f)]).toEqual([f, true]);
    for (const f of ['other.txt', 'run1/greeting.txt', 'run1/srv/model.bin'])
      expect([f, isLogFile(f)]).toEqual([f, false]);
  });
});
