/**
 * `sflow batch --submit` on the Slurm test cluster: the generated script runs this very sflow
 * (Node.js + bin/sflow.js by absolute path) inside the job, which reuses the job's allocation
 * (no salloc); a 3-task workflow completes with its outputs in `<output>/<job id>-*` next to the
 * job's own stdout/stderr; a 4-row CSV submits 4 jobs that each run their row. Queue empty after.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const recipe = (name: string, tasks: string) => `version: '0.1'
variables:
  MSG: {value: hello}
workflow:
  name: ${name}
  tasks:
${tasks}
backends:
  - name: cluster
    type: slurm
    default: true
    partition: ${slurm.get('SFLOW_TEST_SLURM_PARTITION')}
    account: sflowtest
    time: '00:10:00'
    nodes: 1
`;

const DAG = `    - name: a
      script: ["echo A > $SFLOW_TASK_OUTPUT_DIR/a.txt"]
    - name: b
      depends_on: [a]
      script: ["echo B $SLURM_STEP_ID > $SFLOW_TASK_OUTPUT_DIR/b.txt"]
    - name: c
      depends_on: [a]
      script: ["echo C $SLURM_JOB_ID > $SFLOW_TASK_OUTPUT_DIR/c.txt"]`;

/** the jobs are no longer queued */
async function finished(ids: string[]) {
  await until(
    `jobs ${ids.join(',')} to finish`,
    async () => {
      const r = await slurm.exec('squeue', ['-h', '-j', ids.join(','), '-o', '%i']);
      return r.exitCode === 0 && !String(r.stdout).trim();
    },
    100_000,
  );
}

const runFolder = (out: string, job: string) =>
  readdirSync(out).find((d) => d.startsWith(`${job}-`) && !d.endsWith('.out') && !d.endsWith('.err'));

describeWithEngines('sflow batch on Slurm', [slurm], () => {
  it('--submit: a 3-task workflow completes as a Slurm job, outputs and job logs in its run folder', async () => {
    const cwd = newCwd(dirs);
    writeFileSync(join(cwd, 'wf.yaml'), recipe(`${TAG}-batch`, DAG));
    const r = await runSflow(
      ['batch', 'wf.yaml', '-A', 'sflowtest', '-J', `${TAG}-job`, '-o', 'job.sh', '--submit'],
      {
        cwd,
      },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).toContain('auto-detected'); // the partition came from sinfo
    const job = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
    expect(job).toBeDefined();
    await finished([job!]);
    const out = join(cwd, 'sflow_output');
    const run = runFolder(out, job!);
    expect(run, readdirSync(out).join(' ')).toBeDefined();
    const dir = join(out, run!);
    expect(readFileSync(join(dir, 'a', 'a.txt'), 'utf8')).toBe('A\n');
    expect(readFileSync(join(dir, 'b', 'b.txt'), 'utf8')).toMatch(/^B \d+\n$/);
    expect(readFileSync(join(dir, 'c', 'c.txt'), 'utf8')).toBe(`C ${job}\n`);
    // the job's own logs and the workflow file were copied into the run folder
    expect(existsSync(join(dir, 'wf.yaml'))).toBe(true);
    const err = readFileSync(join(dir, `${job}-sflow-submit.err`), 'utf8');
    expect(err).toContain(`reusing Slurm job ${job} (SLURM_JOB_ID)`);
    expect(err).toContain('run --dry-run'); // validated on the compute node first
    expect(readFileSync(join(dir, `${job}-sflow-submit.out`), 'utf8')).toContain('Workflow completed');
    const sacct = await slurm.exec('scontrol', ['show', 'job', job!]);
    if (sacct.exitCode === 0) expect(String(sacct.stdout)).toMatch(/ExitCode=0:0/);
  });

  it('--bulk-input: a 4-row CSV submits 4 jobs, each runs its row', async () => {
    const cwd = newCwd(dirs);
    writeFileSync(
      join(cwd, 'wf.yaml'),
      recipe(
        `${TAG}-bulk`,
        '    - name: say\n      script: ["echo $MSG $SLURM_JOB_NUM_NODES > $SFLOW_TASK_OUTPUT_DIR/say.txt"]',
      ),
    );
    const rows = ['one,1', 'two,2', 'three,1', 'four,2'].map((x) => `wf.yaml,${TAG}b,${x}`);
    writeFileSync(
      join(cwd, 'rows.csv'),
      ['sflow_config_file,job_name,MSG,SLURM_NODES', ...rows].join('\n') + '\n',
    );
    const r = await runSflow(
      [
        'batch',
        '-b',
        'rows.csv',
        '-p',
        slurm.get('SFLOW_TEST_SLURM_PARTITION'),
        '-A',
        'sflowtest',
        '--submit',
      ],
      { cwd },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const ids = [...r.stdout.matchAll(/Slurm job (\d+)/g)].map((m) => m[1]);
    expect(ids).toHaveLength(4);
    expect(r.stdout).toContain('4 submitted');
    await finished(ids);
    const out = join(cwd, 'sflow_output');
    const said = ids.map((id) => {
      const run = runFolder(out, id);
      return run
        ? readFileSync(join(out, run, 'say', 'say.txt'), 'utf8').trim()
        : `no run folder for job ${id}`;
    });
    expect(said).toEqual(['one 1', 'two 2', 'three 1', 'four 2']);
    const bulk = readdirSync(out).find((d) => d.startsWith('bulk_input_'))!;
    const results = readFileSync(join(out, bulk, 'results.csv'), 'utf8');
    for (const id of ids) expect(results).toContain(`,${id},`);
  });
});
