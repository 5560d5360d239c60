/**
 * Writes that fail are reported (issue 9): a run on a full disk — a 256 KiB tmpfs the test mounts
 * (root), whose first task fills it — names each failed write of its own files on the console with
 * the real errno (ENOSPC, not ENOENT) and ends with a non-zero exit code although every task
 * completed. Where mounting is not allowed, the run's events.jsonl is a link to /dev/full instead
 * (the kernel's own ENOSPC on every write), through a hand-built plan.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { buildPlan } from './runtime-plan.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'sflow-fulldisk-'));
const mnt = join(dir, 'mnt');
mkdirSync(mnt);
const mounted =
  process.getuid?.() === 0 &&
  spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt], { stdio: 'ignore' }).status === 0;
afterAll(() => {
  if (mounted) spawnSync('umount', [mnt], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
});

const RECIPE = `version: "0.1"
workflow:
  name: full
  tasks:
    - name: filler
      script: ["head -c 1000000 /dev/zero > $SFLOW_TASK_OUTPUT_DIR/fill 2>/dev/null; true"]
    - name: after
      depends_on: [filler]
      replicas: {count: 30}
      script: ["true"]
`;

describe('a full disk', () => {
  it.runIf(mounted)('the console names each failed write with ENOSPC and the exit code is 1', () => {
    writeFileSync(join(dir, 'full.yaml'), RECIPE);
    const r = sflow(['run', '-f', join(dir, 'full.yaml')], {
      cwd: mnt,
      env: { SFLOW_RUN_INDEX_DIR: join(dir, 'index'), SFLOW_TASK_OUTPUT: 'never' },
    });
    const out = r.stdout + r.stderr;
    expect(r.code).toBe(1);
    expect(out).toMatch(/⚠ writing \S+\/events\.jsonl failed: ENOSPC: no space left on device/);
    expect(out).toMatch(/⚠ handle ledger \S+\/handles\.jsonl: ENOSPC/);
    expect(out).toMatch(/✗ Workflow completed, but \d of its record file\(s\) could not be written/);
    expect(out).not.toContain('ENOENT');
    expect(out).not.toMatch(/\n\s+at /);
  });

  it.runIf(!mounted)('(no tmpfs here) events.jsonl on /dev/full: ENOSPC reported, exit code 1', () => {
    const runDir = join(dir, 'run');
    mkdirSync(runDir);
    symlinkSync('/dev/full', join(runDir, 'events.jsonl'));
    const planFile = join(dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify(buildPlan(runDir, [{ name: 't', script: 'true' }], 'full')));
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        join(repo, 'test/fixtures/ts-loader/register.js'),
        join(repo, 'test/fixtures/runtime/run-plan.ts'),
        planFile,
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, SFLOW_RUN_INDEX_DIR: join(dir, 'index') },
        timeout: 60_000,
      },
    );
    expect(r.status).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /⚠ writing \S+\/events\.jsonl failed: ENOSPC: no space left on device/,
    );
  });
});
