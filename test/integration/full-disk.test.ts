/**
 * Writes that fail are reported (issue 9): a run on a full disk — a 256 KiB tmpfs the test mounts
 * (root), whose first task fills it — names each failed write of its own files on the console with
 * the real errno (ENOSPC, not ENOENT) and ends with a non-zero exit code although every task
 * completed. Each failed record file (sink) is announced once, however many of its writes fail.
 * Everywhere (also where mounting is not allowed), a run whose events.jsonl is a link to /dev/full
 * (the kernel's own ENOSPC on every write, through a hand-built plan) shows that one warning and
 * has the SINK_FAILED row in its sflow_summary.log, which it can still write.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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

/** `⚠ writing <path> failed` lines of the console, counted per path */
function sinkWarnings(out: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of out.split('\n')) {
    const path = /⚠ writing (\S+) failed: /.exec(line)?.[1];
    if (path) counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  return counts;
}

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
    // every write after the filler fails: each failed sink is still announced exactly once
    const warned = sinkWarnings(out);
    expect([...warned.keys()].map((p) => basename(p))).toEqual(
      expect.arrayContaining(['events.jsonl', 'sflow.log']),
    );
    for (const [path, n] of warned) expect(n, path).toBe(1);
    // the verdict counts and lists every record that failed: each warned sink and the handle
    // ledger, plus any whose first failed write came only while the run was closing (which of the
    // records fail during the run, and which only at its end, depends on timing: the list and the
    // count agree whatever it was)
    const verdict =
      /✗ Workflow completed, but (\d+) of its record file\(s\) could not be written \((.*)\)$/m.exec(out);
    expect(verdict, out).not.toBeNull();
    const listed = verdict![2].split('; ').map((e) => e.slice(0, e.indexOf(': ')));
    expect(Number(verdict![1])).toBe(listed.length);
    expect(new Set(listed).size).toBe(listed.length);
    for (const path of warned.keys()) expect(listed).toContain(path);
    expect(listed.map((p) => basename(p))).toContain('handles.jsonl');
    const records = ['events.jsonl', 'sflow.log', 'sflow_summary.log', 'handles.jsonl', 'bash_cmds.log'];
    for (const p of listed) expect(records, p).toContain(basename(p));
  });

  it('events.jsonl on /dev/full: one warning, the SINK_FAILED row in sflow_summary.log, exit code 1', () => {
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
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/⚠ writing \S+\/events\.jsonl failed: ENOSPC: no space left on device/);
    // every event of the run fails to reach events.jsonl; the console says so once
    expect(sinkWarnings(out)).toEqual(new Map([[join(runDir, 'events.jsonl'), 1]]));
    // the summary is on a writable disk: its timeline has the one SINK_FAILED row
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    const rows = summary.split('\n').filter((l) => /\sSINK_FAILED\s/.test(l));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      /^\S+\s+\+\S+\s+-\s+SINK_FAILED\s+events\.jsonl: ENOSPC: no space left on device/,
    );
  });
});
