/**
 * What a failed run prints without a terminal (CI logs), and SFLOW_GPU_PLAN in the task's
 * environment. Real task processes; for GPUs the fake nvidia-smi of assets/test-bin (a 2-GPU host
 * where another program holds GPU 0). In-process through the CLI's entry.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.js';
import { sflowInProcess as cli } from '../helpers/cli-inprocess.js';
import { onlyRunDir, taskLog } from '../helpers/run-dir.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-fail-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function workdir(recipe: string): string {
  const d = join(root, String(++n));
  mkdirSync(d);
  writeFileSync(join(d, 'r.yaml'), recipe);
  return d;
}

const fakeGpus = (cwd: string, apps = '') => ({
  PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH}`,
  FAKE_NVIDIA_SMI_GPUS: '2',
  FAKE_NVIDIA_SMI_APPS: apps,
  SFLOW_GPU_RESERVATION_DIR: join(cwd, 'registry'),
  SFLOW_TASK_OUTPUT: undefined,
});

describe('a task that fails, without a terminal', () => {
  const cwd = workdir(
    'workflow:\n  name: fails\n  tasks:\n    - name: a\n      script:\n        - echo first line\n        - echo "boom: bad input" >&2\n        - exit 3\n    - name: b\n      depends_on: [a]\n      script: [echo never]\n',
  );
  const run = cli(['run', '-f', 'r.yaml'], { cwd, env: { SFLOW_TASK_OUTPUT: undefined } });

  it('prints the cause once, the log path and the log’s last lines', async () => {
    const r = await run;
    expect(r.code).toBe(1);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    const log = join(runDir, 'a', 'a.log');
    expect(r.stdout).toContain(
      `✗ a failed (exit 3): process exited with error\n  log: ${log}\n  last 2 line(s):\n  │ first line\n  │ boom: bad input\n`,
    );
    expect(r.stdout + r.stderr).not.toMatch(/exit=3/);
  });

  it('says "Workflow ... failed" once, not "Workflow failed: Workflow ..."', async () => {
    const r = await run;
    expect(r.stderr).toContain("✗ Workflow 'fails' failed: 1 task(s) failed (a)\n  Output folder: ");
    expect(r.stderr).not.toContain('Workflow failed: Workflow');
  });

  it('the summary’s Failure Hints give a log only for tasks that started', async () => {
    await run;
    const summary = readFileSync(join(onlyRunDir(join(cwd, 'sflow_output')), 'sflow_summary.log'), 'utf8');
    const hints = summary.slice(summary.indexOf('Failure Hints'));
    expect(hints).toMatch(
      /\na: FAILED after 1 attempt\(s\) - process exited with error \(exit=3\)\n {2}log: .*a\.log\n/,
    );
    expect(hints).toMatch(/\nb: CANCELLED after 0 attempt\(s\) - [^\n]*\n?$/);
    expect(hints).not.toContain('b.log');
  });
});

describe('GPUs busy with another program', () => {
  it('the task "never started", names the busy GPU and its holder, and every way out', async () => {
    const recipe =
      'backends:\n  - name: box\n    type: local\n    default: true\nworkflow:\n  name: g\n  tasks:\n    - name: a\n      resources: {gpus: {count: 2}}\n      script: [echo hi]\n';
    const cwd = workdir(recipe);
    const r = await cli(['run', '-f', 'r.yaml'], { cwd, env: fakeGpus(cwd, '0:4242:2048') });
    expect(r.code).toBe(1);
    const text = r.stdout + r.stderr;
    expect(text).toMatch(/✗ a never started: Task 'a' of run 'g-[^']+' needs 2 GPU\(s\), but only 1 of 2/);
    expect(text).toContain(
      'GPU 0 (GPU-0000a1b2-0000-4000-8000-000000000011): busy with a foreign workload (pid 4242 using 2048 MiB)',
    );
    for (const way of [
      '--wait-for-gpus',
      'SFLOW_GPU_IGNORE_FOREIGN',
      'SFLOW_GPU_BUSY_MEM_MIB',
      'SFLOW_GPU_RESERVATION=0',
    ])
      expect(text, way).toContain(way);
    expect(text).not.toContain('still running');
    const summary = readFileSync(join(onlyRunDir(join(cwd, 'sflow_output')), 'sflow_summary.log'), 'utf8');
    expect(summary.slice(summary.indexOf('Failure Hints'))).not.toContain('log:');
  });
});

describe('SFLOW_GPU_PLAN', () => {
  const recipe =
    'backends:\n  - name: box\n    type: local\n    default: true\n    gpus_per_node: 4\nworkflow:\n  name: p\n  tasks:\n    - name: first\n      resources: {gpus: {count: 2}}\n      script: [\'echo "plan=$SFLOW_GPU_PLAN cvd=$CUDA_VISIBLE_DEVICES"\']\n    - name: second\n      resources: {gpus: {count: 2}}\n      script: [\'echo "plan=$SFLOW_GPU_PLAN cvd=$CUDA_VISIBLE_DEVICES"\']\n';

  it('holds the planned host GPU indices of each task (planned slots, no GPUs here)', async () => {
    const cwd = workdir(recipe);
    const r = await cli(['run', '-f', 'r.yaml'], { cwd, env: { PATH: '/usr/bin:/bin' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    expect(taskLog(runDir, 'first')).toBe('plan=0,1 cvd=0,1\n');
    expect(taskLog(runDir, 'second')).toBe('plan=2,3 cvd=2,3\n');
  });

  it('follows what the GPU reservation registry granted on a host with GPUs', async () => {
    const cwd = workdir(recipe.replace('    gpus_per_node: 4\n', ''));
    const r = await cli(['run', '-f', 'r.yaml'], {
      cwd,
      env: { ...fakeGpus(cwd), FAKE_NVIDIA_SMI_GPUS: '4' },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    for (const t of ['first', 'second']) {
      const m = /^plan=([\d,]+) cvd=([\d,]+)$/.exec(taskLog(runDir, t).trim());
      expect(m, t).not.toBeNull();
      expect(m![1]).toBe(m![2]);
    }
  });

  it('is in the dry-run plan of every task with GPUs', async () => {
    const cwd = workdir(recipe);
    const { buildPlan } = await import('../../src/plan/build.js');
    const { loadRecipe } = await import('../../src/config/load.js');
    const { backendCatalog } = await import('../../src/backends/registry.js');
    const plan = buildPlan(loadRecipe({ files: [join(cwd, 'r.yaml')] }), {
      catalog: backendCatalog,
      dryRun: true,
      runId: 'x',
      workspaceDir: cwd,
    });
    expect(plan.tasks.map((t) => t.env.SFLOW_GPU_PLAN)).toEqual(['0,1', '2,3']);
  });
});
