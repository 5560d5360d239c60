/**
 * A Slurm recipe on a machine without the Slurm client tools (backends.md §4.2): the run stops in
 * pre-flight, before anything is allocated, naming the missing commands — no stack trace,
 * no job.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-slurm-preflight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('missing salloc/srun/scontrol/scancel: a pre-flight error naming them, exit 1', () => {
  const empty = join(dir, 'empty-bin');
  writeFileSync(
    join(dir, 'wf.yaml'),
    [
      "version: '0.1'",
      'workflow:',
      '  name: pf',
      '  tasks:',
      "    - {name: a, script: ['true']}",
      'backends:',
      "  - {name: cluster, type: slurm, default: true, partition: p, account: a, time: '00:05:00', nodes: 1}",
    ].join('\n') + '\n',
  );
  const r = sflow(['run', 'wf.yaml'], {
    cwd: dir,
    env: { PATH: empty, SLURM_JOB_ID: '', SLURM_JOBID: '', SLURM_JOB_NODELIST: '', SLURM_NODELIST: '' },
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("backend 'cluster' (slurm): salloc, srun, scontrol, scancel not found on PATH");
  expect(r.stderr).toMatch(/✗ Workflow 'pf' failed: .*not found on PATH/);
  expect(hasStackTrace(r.stderr)).toBe(false);
});
