/**
 * The Slurm test cluster (scripts/engines/slurm.sh) does what the Slurm backend tests rely on: two
 * nodes with fake GPUs as GRES that set CUDA_VISIBLE_DEVICES, allocations with steps (also --overlap),
 * cancellation that leaves squeue empty, and batch jobs that run to COMPLETED.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngines, engine } from '../helpers/engines.js';

const slurm = engine('slurm');
const tag = `sflowfx-${process.pid}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** poll until check() is truthy; fails with `what` after the deadline */
async function until<T>(what: string, check: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

async function out(file: string, args: string[]): Promise<string> {
  const r = await slurm.exec(file, args);
  if (r.exitCode !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
  return String(r.stdout);
}

const queued = async (jobId: string) => (await out('squeue', ['-h', '-j', jobId, '-o', '%i'])).trim();
const steps = async (jobId: string) => (await out('squeue', ['-h', '-s', '-j', jobId, '-o', '%i'])).trim();
const jobState = async (jobId: string) =>
  /JobState=(\w+)/.exec(await out('scontrol', ['show', 'job', jobId]))?.[1] ?? '';

describeWithEngines('Slurm test cluster', [slurm], () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sflow-slurm-'));
  });
  afterAll(async () => {
    await slurm.exec('scancel', ['--name', `${tag}-alloc`]);
    await slurm.exec('scancel', ['--name', `${tag}-batch`]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('has nodes n1 and n2, each with gpu GRES', async () => {
    const lines = (await out('sinfo', ['-h', '-N', '-o', '%N %G'])).trim().split('\n').sort();
    const gpus = slurm.get('SFLOW_TEST_SLURM_GPUS_PER_NODE');
    expect(lines).toEqual([`n1 gpu:${gpus}`, `n2 gpu:${gpus}`]);
  });

  it('srun -N2 runs one task on each node', async () => {
    const lines = (await out('srun', ['-N2', '-l', 'printenv', 'SLURMD_NODENAME'])).trim().split('\n').sort();
    expect(lines).toEqual(['0: n1', '1: n2']);
  });

  it('--gres=gpu:N sets CUDA_VISIBLE_DEVICES to N devices on every node', async () => {
    const two = await out('srun', [
      '-N1',
      '-w',
      'n2',
      '--gres=gpu:2',
      'sh',
      '-c',
      'echo $CUDA_VISIBLE_DEVICES',
    ]);
    expect(two.trim()).toBe('0,1');
    const one = await out('srun', ['-N2', '-l', '--gres=gpu:1', 'sh', '-c', 'echo $CUDA_VISIBLE_DEVICES']);
    expect(one.trim().split('\n').sort()).toEqual(['0: 0', '1: 0']);
    const none = await out('srun', ['-N1', 'sh', '-c', 'echo "[${CUDA_VISIBLE_DEVICES:-unset}]"']);
    expect(none.trim()).toBe('[unset]');
  });

  it('salloc --no-shell, steps with --jobid, an --overlap step, scancel leaves squeue empty', async () => {
    const alloc = await slurm.exec('salloc', ['-N2', '--no-shell', '-J', `${tag}-alloc`]);
    const jobId = /Granted job allocation (\d+)/.exec(String(alloc.stderr))?.[1];
    expect(jobId, String(alloc.stderr)).toBeTruthy();
    const id = jobId!;

    const step = await out('srun', [`--jobid=${id}`, '-N2', '-l', 'printenv', 'SLURM_JOB_ID']);
    expect(step.trim().split('\n').sort()).toEqual([`0: ${id}`, `1: ${id}`]);

    // a long step holds the allocation; only an --overlap step may run beside it
    const long = slurm.exec('srun', [`--jobid=${id}`, '-N2', 'sleep', '60']);
    await until(`step ${id}.1 running`, async () => (await steps(id)).includes(`${id}.1`));
    const overlap = await out('srun', [`--jobid=${id}`, '--overlap', '-N1', 'echo', 'overlap-ran']);
    expect(overlap.trim()).toBe('overlap-ran');
    expect(await steps(id)).toContain(`${id}.1`); // the long step is still there

    await out('scancel', [id]);
    await until(
      'squeue empty of the allocation and its steps',
      async () => !(await queued(id)) && !(await steps(id)),
    );
    const longResult = await long;
    expect(longResult.exitCode).not.toBe(0);
    expect(await jobState(id)).toBe('CANCELLED');
  });

  it('sbatch runs a two-node job to COMPLETED with its output', async () => {
    const outFile = join(dir, 'job-%j.out');
    const jobId = (
      await out('sbatch', [
        '--parsable',
        '-N2',
        '-J',
        `${tag}-batch`,
        '-o',
        outFile,
        '--wrap',
        'srun -l printenv SLURMD_NODENAME',
      ])
    ).trim();
    expect(jobId).toMatch(/^\d+$/);
    const state = await until(`job ${jobId} to finish`, async () => {
      const s = await jobState(jobId);
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL'].includes(s) ? s : '';
    });
    expect(state).toBe('COMPLETED');
    const text = readFileSync(outFile.replace('%j', jobId), 'utf8');
    expect(text.trim().split('\n').sort()).toEqual(['0: n1', '1: n2']);
  });

  it('scancel of a running batch job leaves squeue empty of it', async () => {
    const jobId = (
      await out('sbatch', ['--parsable', '-J', `${tag}-batch`, '-o', '/dev/null', '--wrap', 'sleep 300'])
    ).trim();
    await until(`job ${jobId} running`, async () => (await jobState(jobId)) === 'RUNNING');
    await out('scancel', [jobId]);
    await until(`squeue empty of job ${jobId}`, async () => !(await queued(jobId)));
    expect(await jobState(jobId)).toBe('CANCELLED');
  });
});
