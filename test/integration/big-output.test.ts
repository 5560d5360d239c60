/**
 * Through `sflow run`: a task printing 1 GB, and a task printing one 50 MB line without a newline.
 * The log holds every byte (size and sha256 against the bytes the task was told to write), and the
 * driver's memory stays flat (peak RSS recorded by bench/rss-hook.mjs inside the sflow process).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { BIN, REPO } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';

/** a generous ceiling: the driver's RSS is ~60–110 MiB whatever the output size */
const RSS_CEILING_MIB = 250;

function runRecipe(
  name: string,
  cmd: string,
): { runDir: string; rssMiB: number; code: number | null; stderr: string } {
  const cwd = scratchDir(`sflow-big-${name}-`);
  const file = join(cwd, `${name}.yaml`);
  writeFileSync(
    file,
    `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n    - name: out\n      script:\n        - ${cmd}\n`,
  );
  const rssFile = join(cwd, 'rss');
  const r = spawnSync(
    process.execPath,
    ['--import', join(REPO, 'bench', 'rss-hook.mjs'), BIN, 'run', '-f', file],
    {
      cwd,
      env: { ...process.env, SFLOW_BENCH_RSS_FILE: rssFile },
      encoding: 'utf8',
      timeout: 240_000,
      // the console copy of 1 GB goes nowhere; a captured stdout would hit spawnSync's maxBuffer
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const rss = Math.max(...readFileSync(rssFile, 'utf8').trim().split('\n').map(Number)) / 1024;
  return { runDir: onlyRunDir(join(cwd, 'sflow_output')), rssMiB: rss, code: r.status, stderr: r.stderr };
}

/** sha256 of `unit` repeated and cut to `size` bytes, computed without materialising it */
function expectedHash(unit: string, size: number): string {
  const h = createHash('sha256');
  const block = Buffer.from(unit.repeat(Math.ceil((1 << 20) / unit.length)));
  const whole = block.length - (block.length % unit.length);
  let left = size;
  while (left > 0) {
    const n = Math.min(left, whole);
    h.update(block.subarray(0, n));
    left -= n;
  }
  return h.digest('hex');
}

async function fileHash(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

describe.sequential('big task output through sflow run', () => {
  it('1 GB of lines: byte-exact log, flat driver memory', async () => {
    const size = 1_000_000_000;
    const r = runRecipe('out1gb', `yes 0123456789abcdef | head -c ${size}`);
    expect(r.code, r.stderr).toBe(0);
    const log = join(r.runDir, 'out', 'out.log');
    expect(statSync(log).size).toBe(size);
    expect(await fileHash(log)).toBe(expectedHash('0123456789abcdef\n', size));
    expect(r.rssMiB).toBeLessThan(RSS_CEILING_MIB);
  }, 240_000);

  it('one 50 MB line without a newline: byte-exact log, flat driver memory', async () => {
    const size = 50_000_000;
    const r = runRecipe('line50mb', `head -c ${size} /dev/zero | tr '\\0' a`);
    expect(r.code, r.stderr).toBe(0);
    const log = join(r.runDir, 'out', 'out.log');
    expect(statSync(log).size).toBe(size);
    expect(await fileHash(log)).toBe(expectedHash('a', size));
    expect(r.rssMiB).toBeLessThan(RSS_CEILING_MIB);
  }, 120_000);
});
