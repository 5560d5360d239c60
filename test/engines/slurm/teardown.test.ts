/**
 * Nothing is left in the Slurm queue: Ctrl-C or SIGTERM in the middle of a run and a failing task
 * (fail_fast) all leave squeue empty of the run's job and steps within 5 s; a driver killed with SIGKILL
 * leaves nothing (the launcher's lifeline and the run reaper), and one killed together with its
 * launcher (SFLOW_LAUNCHER=inline) leaves them running, which `sflow recover <run dir>` cancels. Also:
 * Ctrl-C while the allocation is still queued cancels the pending job. And the opposite: a run
 * inside an allocation it did not make (SLURM_JOB_ID of a job the test made with salloc) leaves
 * that job queued when it releases; only its own steps are gone.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { sflow } from '../../helpers/cli.js';
import { processesWith } from '../../conformance/procs.js';
import { taskLog } from '../../helpers/run-dir.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, stepsOfJobs, until } from './slurm-helpers.js';
import { newCwd, runSflow, startSflow } from './sflow-cli.js';
import { engineStateOf } from '../../../src/backends/handle-state.js';
import { slurmHandleState } from '../../../src/backends/slurm/handle-state.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TWO_SERVICES = [
  "version: '0.1'",
  'workflow:',
  '  name: held',
  '  tasks:',
  '    - name: server_a',
  "      script: ['echo up; sleep 300']",
  '    - name: server_b',
  '      resources: {nodes: {indices: [1]}}',
  "      script: ['echo up; sleep 300']",
].join('\n');

function setUp(name: string, yaml: string, extra?: string[]) {
  const cwd = newCwd(dirs);
  const job = `${TAG}-${name}`;
  const frag = clusterFragment(cwd, { jobName: job, extra });
  const wf = join(cwd, 'wf.yaml');
  writeFileSync(wf, yaml);
  return { cwd, job, args: ['run', '-f', frag, '-f', wf] };
}

/** the run's job id once both of its steps run */
async function stepsRunning(job: string, n: number): Promise<string> {
  return until(
    `${n} steps of ${job} running`,
    async () => {
      const [id] = await jobsNamed(job);
      return id && (await stepsOfJobs([id])).length >= n ? id : '';
    },
    60_000,
  );
}

/** squeue empty of the job and its steps; returns how long that took after `since` */
async function emptyWithin(job: string, id: string, since: number, ms: number): Promise<number> {
  await until(
    `squeue empty of job ${id} (${job}) and its steps`,
    async () => (await jobsNamed(job)).length === 0 && (await stepsOfJobs([id])).length === 0,
    ms,
  );
  return Date.now() - since;
}

describeWithEngines('Slurm: nothing left in the queue', [slurm], () => {
  it('Ctrl-C mid-run: exit 130, squeue empty of the job and its steps within 5 s', async () => {
    const { cwd, job, args } = setUp('int', TWO_SERVICES);
    const run = startSflow(args, { cwd });
    const id = await stepsRunning(job, 2);
    const t0 = Date.now();
    run.child.kill('SIGINT');
    await emptyWithin(job, id, t0, 5_000);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stdout + r.stderr).toContain('cancelled');
  });

  it('SIGTERM mid-run: exit 143, squeue empty of the job and its steps within 5 s', async () => {
    const { cwd, job, args } = setUp('term', TWO_SERVICES);
    const run = startSflow(args, { cwd });
    const id = await stepsRunning(job, 2);
    const t0 = Date.now();
    run.child.kill('SIGTERM');
    await emptyWithin(job, id, t0, 5_000);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(143);
  });

  it('a failing task (fail_fast): exit 1, squeue empty of the job and its steps within 5 s', async () => {
    const { cwd, job, args } = setUp(
      'fail',
      [
        "version: '0.1'",
        'workflow:',
        '  name: failing',
        '  tasks:',
        '    - name: server',
        "      script: ['echo up; sleep 300']",
        '    - name: bad',
        '      fail_fast: true',
        "      script: ['sleep 2; echo boom; exit 3']",
      ].join('\n'),
    );
    const run = startSflow(args, { cwd });
    const id = await stepsRunning(job, 2);
    const failedAt = await until('the failing step to end', async () => {
      const steps = await stepsOfJobs([id]);
      return steps.length < 2 ? Date.now() : 0;
    });
    await emptyWithin(job, id, failedAt, 5_000);
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/bad/);
  });

  it('a SIGKILLed driver (default launcher, monitored): nothing of the run is left — steps, collector steps, srun clients, the allocation', async () => {
    const { cwd, job, args } = setUp('lifeline', TWO_SERVICES);
    const run = startSflow([...args, '--enable-workflow-monitor'], { cwd });
    // two task steps and one monitor collector step per node
    const id = await stepsRunning(job, 4);
    const runDir = run.runDir();
    expect(processesWith(runDir).length).toBeGreaterThan(0); // collector srun clients, the idle reaper
    run.child.kill('SIGKILL');
    await run.done;
    // polled (grace 5 s + 2 s on an idle machine; this one is loaded): the lifeline stops every
    // srun client (each ends its step) and wakes the reaper, whose `sflow recover` cancels the
    // allocation sflow made
    await emptyWithin(job, id, Date.now(), 60_000);
    await until('no process of the run', () => processesWith(runDir).length === 0, 60_000);
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toContain(`ended by a lost driver (pid ${run.child.pid}`);
    expect(readFileSync(join(runDir, 'sflow_reaper.log'), 'utf8')).toContain(
      `Slurm job ${id} (cluster) cancelled`,
    );
  });

  it('a SIGKILLed driver leaves its steps running; sflow recover cancels them and the allocation', async () => {
    const { cwd, job, args } = setUp('kill', TWO_SERVICES);
    // inline spawns: no launcher lifeline stops the srun clients when the driver dies (as when
    // driver and launcher are killed at once), so the steps outlive it — what recover is for
    const run = startSflow(args, { cwd, env: { SFLOW_LAUNCHER: 'inline' } });
    const id = await stepsRunning(job, 2);
    // step ids reach the ledger as soon as scontrol names them
    const runDir = await until('both step ids in the ledger', () => {
      try {
        const d = run.runDir();
        // distinct tasks: one task's step can be recorded twice (ids arrive, then its state changes)
        const withStep = new Set(
          readHandleLedger(join(d, 'handles.jsonl'))
            .all.filter((h) => {
              const s = engineStateOf(slurmHandleState, h);
              return s.job === id && s.steps.length > 0;
            })
            .map((h) => h.task),
        );
        return withStep.has('server_a') && withStep.has('server_b') ? d : '';
      } catch {
        return '';
      }
    });
    run.child.kill('SIGKILL');
    await run.done;
    await new Promise((r) => setTimeout(r, 1000));
    expect(await jobsNamed(job)).toEqual([id]); // left behind
    expect((await stepsOfJobs([id])).length).toBe(2);
    const r = sflow(['recover', runDir], { cwd, env: slurm.childEnv(), timeoutMs: 90_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // what Backend.recover and the kind's recoverRun say (the CLI around them may word the rest)
    expect(r.stdout).toMatch(/server_a.*step \d+\.\d+ of server_a cancelled/);
    expect(r.stdout).toMatch(/server_b.*step \d+\.\d+ of server_b cancelled/);
    expect(r.stdout).toContain(`Slurm job ${id} (cluster) cancelled`);
    await emptyWithin(job, id, Date.now(), 10_000);
    // a second recover finds nothing more to cancel
    const again = sflow(['recover', runDir], { cwd, env: slurm.childEnv(), timeoutMs: 60_000 });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).not.toContain('cancelled');
  });

  it('a reused allocation (SLURM_JOB_ID) is not cancelled when the run releases it', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-reuse`;
    const alloc = await slurm.exec('salloc', ['-N2', '--no-shell', '-J', job, '-t', '00:10:00']);
    expect(alloc.exitCode, String(alloc.stderr)).toBe(0);
    const id = /Granted job allocation (\d+)/.exec(String(alloc.stderr))?.[1] ?? '';
    expect(id).not.toBe('');
    try {
      const nodes = String((await slurm.exec('squeue', ['-h', '-j', id, '-o', '%N'])).stdout).trim();
      const wf = join(cwd, 'wf.yaml');
      writeFileSync(
        wf,
        [
          "version: '0.1'",
          'workflow:',
          '  name: reuse',
          '  tasks:',
          '    - name: step',
          '      resources: {nodes: {count: 2}}',
          "      script: ['echo in=$SLURM_JOB_ID']",
        ].join('\n'),
      );
      // no job_name in the fragment: a salloc of the run's own would not be named after `job`
      const frag = clusterFragment(cwd);
      const r = await runSflow(['run', '-f', frag, '-f', wf], {
        cwd,
        env: { SLURM_JOB_ID: id, SLURM_JOB_NODELIST: nodes },
      });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.stderr + r.stdout).toContain(`reusing Slurm job ${id} (SLURM_JOB_ID)`);
      expect(taskLog(r.runDir(), 'step').trim().split('\n').sort()).toEqual([`0: in=${id}`, `1: in=${id}`]);
      // released: the run's steps are gone, the allocation it did not make is still there
      await until(`no step of job ${id} left`, async () => (await stepsOfJobs([id])).length === 0, 10_000);
      const state = await slurm.exec('squeue', ['-h', '-j', id, '-o', '%T']);
      expect(String(state.stdout).trim()).toBe('RUNNING');
      expect(await jobsNamed(job)).toEqual([id]);
    } finally {
      await slurm.exec('scancel', [id]);
    }
    await until(
      `job ${id} gone after the test's scancel`,
      async () => (await jobsNamed(job)).length === 0,
      10_000,
    );
  });

  it('Ctrl-C while the allocation is queued cancels the pending job', async () => {
    // --begin keeps the job pending for an hour: salloc waits, showing progress
    const { cwd, job, args } = setUp('queued', TWO_SERVICES, ['--begin=now+3600']);
    const run = startSflow(args, { cwd });
    await until(`${job} pending`, async () => (await jobsNamed(job)).length === 1, 30_000);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    await until(`${job} gone`, async () => (await jobsNamed(job)).length === 0, 5_000);
    expect(r.stdout + r.stderr).toMatch(/queued|waiting/);
  });

  it('a recover while the driver still runs is refused', async () => {
    const { cwd, job, args } = setUp('live', TWO_SERVICES);
    const run = startSflow(args, { cwd });
    await stepsRunning(job, 2);
    const r = sflow(['recover', run.runDir()], { cwd, env: slurm.childEnv(), timeoutMs: 60_000 });
    expect(r.code).not.toBe(0); // refused, naming the live driver (Slurm kind's liveDriver)
    expect(r.stderr).toMatch(/another sflow drives this run folder: pid \d+/);
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(143);
    await until(`${job} gone`, async () => (await jobsNamed(job)).length === 0, 5_000);
  });
});
