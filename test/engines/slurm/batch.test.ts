/**
 * `sflow batch --submit` on the Slurm test cluster: the generated script runs this very sflow
 * (Node.js + bin/sflow.js by absolute path) inside the job, which reuses the job's allocation
 * (no salloc); without -p/-A the job takes partition, account, time and extra_args from the
 * recipe's slurm backend and runs the composed copy written beside the script; a 4-task workflow
 * completes with its outputs in `<output>/<job id>-*` next to the
 * job's own stdout/stderr; a 4-row CSV submits 4 jobs that each run their row. Queue empty after.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

const recipe = (name: string, tasks: string, extra = '') => `version: '0.1'
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
${extra}`;

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
  it('--submit without -p/-A: the recipe backend gives partition, account, time and extra_args; the job runs the composed copy', async () => {
    const cwd = newCwd(dirs);
    mkdirSync(join(cwd, 'src'));
    const comment = `${TAG}-from-extra-args`;
    writeFileSync(
      join(cwd, 'src', 'wf.yaml'),
      recipe(
        `${TAG}-batch`,
        `${DAG}\n    - name: d\n      depends_on: [a]\n      script: ["echo $MSG > $SFLOW_TASK_OUTPUT_DIR/d.txt"]`,
        `    extra_args: ['--comment=${comment}']\n`,
      ),
    );
    const r = await runSflow(
      ['batch', 'src/wf.yaml', '-s', 'MSG=composed', '-J', `${TAG}-job`, '-o', 'jobs/job.sh', '--submit'],
      { cwd },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).not.toContain('auto-detected'); // nothing asked of sinfo / sacctmgr
    const job = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
    expect(job).toBeDefined();
    // the script says where each setting came from, and runs the copy written beside it
    const script = readFileSync(join(cwd, 'jobs', 'job.sh'), 'utf8');
    expect(script).toMatch(
      /^# {3}--partition=\S+\s+← the recipe: backend 'cluster' partition \(.*wf\.yaml:\d+:\d+\)$/m,
    );
    expect(script).toMatch(/^# {3}--account=sflowtest\s+← the recipe: backend 'cluster' account/m);
    expect(script).toMatch(/^# {3}--comment=\S+\s+← the recipe: backend 'cluster' extra_args/m);
    expect(script).toContain(`#SBATCH --comment=${comment}`);
    expect(script).toContain(`RUN_ARGS=(--file ${join(cwd, 'jobs', 'job.yaml')} `);
    expect(script).not.toContain('src/wf.yaml --');
    await finished([job!]);
    // Slurm took the recipe's account, time limit and extra_args
    // (scontrol keeps a finished job for MinJobAge, 300 s)
    const show = String((await slurm.exec('scontrol', ['show', 'job', job!])).stdout);
    expect(show).toMatch(/Account=sflowtest/);
    expect(show).toMatch(/TimeLimit=00:10:00/);
    expect(show).toContain(`Comment=${comment}`);
    expect(show).toMatch(/ExitCode=0:0/);
    const out = join(cwd, 'sflow_output');
    const run = runFolder(out, job!);
    expect(run, readdirSync(out).join(' ')).toBeDefined();
    const dir = join(out, run!);
    expect(readFileSync(join(dir, 'a', 'a.txt'), 'utf8')).toBe('A\n');
    expect(readFileSync(join(dir, 'b', 'b.txt'), 'utf8')).toMatch(/^B \d+\n$/);
    expect(readFileSync(join(dir, 'c', 'c.txt'), 'utf8')).toBe(`C ${job}\n`);
    // the -s override reached the job through the composed copy, which is kept with the run
    expect(readFileSync(join(dir, 'd', 'd.txt'), 'utf8')).toBe('composed\n');
    expect(existsSync(join(dir, 'job.yaml'))).toBe(true);
    const err = readFileSync(join(dir, `${job}-sflow-submit.err`), 'utf8');
    expect(err).toContain(`reusing Slurm job ${job} (SLURM_JOB_ID)`);
    expect(err).toContain('run --dry-run'); // validated on the compute node first
    expect(err).toContain(`--file ${join(cwd, 'jobs', 'job.yaml')}`);
    expect(err).not.toContain('wf.yaml');
    expect(readFileSync(join(dir, `${job}-sflow-submit.out`), 'utf8')).toContain('Workflow completed');
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
