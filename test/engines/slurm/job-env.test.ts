/**
 * `SFLOW_BACKEND_JOB_ID` and `SFLOW_TASK_NODE_NAME` on the Slurm test cluster: the original
 * tool's own multi-backend sample (../shared/compat) prints each task's job id, which must be the
 * Slurm job its backend allocated; a single-node step, a 2-node step and a 2-node GPU step (whose
 * node name comes from the in-step GPU prelude) see the name of the node each rank runs on and
 * the job id Slurm gives the step.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { taskLog } from '../../helpers/run-dir.js';
import { sharedMissing, sharedPath } from '../../helpers/shared.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const MULTI = 'src/sflow/samples/self_contained/slurm/multi_backend.yaml';
const noCompat = sharedMissing(`compat/${MULTI}`);
const itCompat = noCompat && process.env.SFLOW_REQUIRE_SHARED !== '1' ? it.skip : it;
if (noCompat) console.warn(`[slurm] compat sample run skipped: ${noCompat}`);

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) {
    await cancelNamed(TAG);
    // the compat sample names its allocations after its workflow
    for (const id of await jobsNamed('multi_backend_slurm')) await slurm.exec('scancel', [id]);
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** the Slurm jobs a run allocated, by backend (its slurm_allocations.jsonl) */
function allocations(runDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(runDir, 'slurm_allocations.jsonl'), 'utf8').trim().split('\n')) {
    const r = JSON.parse(line) as { op: string; backend: string; jobId: string };
    if (r.op === 'allocated') out[r.backend] = r.jobId;
  }
  return out;
}

const sortedLines = (text: string) => text.trim().split('\n').sort();

describeWithEngines('SFLOW_BACKEND_JOB_ID and SFLOW_TASK_NODE_NAME on Slurm', [slurm], () => {
  itCompat("the original's multi_backend sample prints each backend's real Slurm job id", async () => {
    const cwd = newCwd(dirs);
    const partition = slurm.get('SFLOW_TEST_SLURM_PARTITION');
    const r = await runSflow(
      [
        'run',
        '-f',
        sharedPath('compat', MULTI),
        // no pyxis here: the samples' container images are set empty (no --container-image)
        ...['-s', `PARTITION_A=${partition}`, '-s', `PARTITION_B=${partition}`],
        ...['-s', 'IMAGE_A=', '-s', 'IMAGE_B=', '-s', 'SLURM_ACCOUNT=sflowtest'],
        '--skip-artifact-check',
      ],
      { cwd, timeoutMs: 180_000 },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const jobs = allocations(run);
    expect(Object.keys(jobs).sort()).toEqual(['cluster_a', 'cluster_b']);
    expect(jobs.cluster_a).not.toBe(jobs.cluster_b);
    // task_a spans cluster_a's two nodes (one line per rank), task_b runs on cluster_b
    expect(sortedLines(taskLog(run, 'task_a')).filter((l) => l.includes('backend='))).toEqual([
      `0: task_a backend=cluster_a job=${jobs.cluster_a} nodes=n1,n2`,
      `1: task_a backend=cluster_a job=${jobs.cluster_a} nodes=n1,n2`,
    ]);
    expect(taskLog(run, 'task_b')).toContain(`task_b backend=cluster_b job=${jobs.cluster_b} nodes=n1`);
    await until(
      'the sample allocations to end',
      async () => (await jobsNamed('multi_backend_slurm')).length === 0,
      10_000,
    );
  });

  it('single-node, 2-node and 2-node GPU steps: the node each rank runs on, the step’s job id', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-env`;
    const frag = clusterFragment(cwd, { jobName: job, gpusPerNode: 2 });
    const show = `'echo "name=$SFLOW_TASK_NODE_NAME slurmd=$SLURMD_NODENAME job=$SFLOW_BACKEND_JOB_ID slurm_job=$SLURM_JOB_ID"'`;
    const wf = join(cwd, 'env.yaml');
    writeFileSync(
      wf,
      [
        "version: '0.1'",
        'workflow:',
        '  name: job_env',
        '  tasks:',
        '    - name: second_node',
        '      resources: {nodes: {indices: [1]}}',
        `      script: [${show}]`,
        '    - name: both',
        '      resources: {nodes: {count: 2}}',
        `      script: [${show}]`,
        '    - name: both_gpu',
        '      depends_on: [both]',
        '      resources: {nodes: {count: 2}, gpus: {indices: [0]}}',
        `      script: [${show}]`,
      ].join('\n') + '\n',
    );
    const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd, fakeGpus: 2 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const id = allocations(run).cluster;
    expect(id).toMatch(/^\d+$/);
    const line = (rank: number, node: string) =>
      `${rank}: name=${node} slurmd=${node} job=${id} slurm_job=${id}`;
    expect(taskLog(run, 'second_node').trim()).toBe(line(0, 'n2'));
    expect(sortedLines(taskLog(run, 'both'))).toEqual([line(0, 'n1'), line(1, 'n2')]);
    expect(sortedLines(taskLog(run, 'both_gpu'))).toEqual([line(0, 'n1'), line(1, 'n2')]);
    await until(`squeue empty of ${job}`, async () => (await jobsNamed(job)).length === 0, 10_000);
  });
});
