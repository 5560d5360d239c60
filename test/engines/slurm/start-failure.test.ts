/**
 * A Slurm step that never starts is a failed start, named: with the slurmd of node n2 killed (this
 * fixture's own daemon, started again afterwards), a two-node task's step cannot be launched there;
 * srun says so and the task ends FAILED with srun's words ("Task launch … failed on node n2") and a
 * hint, not as a task that ran and exited. A step that waits for resources other steps hold
 * (`overlap: false` beside a step that holds every CPU of the node) fails once it has waited past
 * SFLOW_SLURM_STEP_START_TIMEOUT, naming the bound and what srun said. No job or step of the run is left.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, stepsOfJobs, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
const engineScript = join(REPO, 'scripts', 'engines', 'slurm.sh');
/** `slurm.sh fault VERB DAEMON` on this suite's cluster only */
const fault = (verb: 'kill' | 'start', daemon: string) =>
  execFileSync('bash', [engineScript, 'fault', verb, daemon], {
    env: { ...process.env, SFLOW_ENGINES_DIR: join(slurm.get('SFLOW_TEST_SLURM_DIR'), '..') },
    stdio: 'pipe',
    timeout: 90_000,
  });

afterAll(async () => {
  if (slurm.skip) return;
  fault('start', 'slurmd-n2'); // whatever happened, the cluster is whole again for later suites
  await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Finished {
  type: string;
  task?: string;
  status?: string;
  reason?: string;
}
const finished = (runDir: string, task: string): Finished | undefined =>
  readFileSync(join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Finished)
    .find((e) => e.type === 'task_finished' && e.task === task);

describeWithEngines('Slurm: a step that never starts fails its task, named', [slurm], () => {
  it('the slurmd of a node is dead: FAILED with "Task launch … failed on node n2" and a hint', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-nodedead`;
    const frag = clusterFragment(cwd, { jobName: job });
    const wf = join(cwd, 'wf.yaml');
    writeFileSync(
      wf,
      [
        "version: '0.1'",
        'workflow:',
        '  name: nodedead',
        '  tasks:',
        '    - name: span',
        '      resources: {nodes: {count: 2}}',
        "      script: ['echo ran']",
      ].join('\n'),
    );
    fault('kill', 'slurmd-n2');
    try {
      // slurmctld still lists n2 as up (it notices a dead slurmd only after SlurmdTimeout)
      const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd, timeoutMs: 150_000 });
      const out = r.stdout + r.stderr;
      expect(r.code, out).toBe(1);
      const fin = finished(r.runDir(), 'span');
      expect(fin?.status).toBe('FAILED');
      expect(fin?.reason).toMatch(
        /the Slurm step did not start: Task launch for StepId=\S+ failed on node n2/,
      );
      expect(fin?.reason).toMatch(/scontrol show node n2/);
      expect(out).toMatch(/failed on node n2/);
    } finally {
      fault('start', 'slurmd-n2');
    }
    await until(`no job of ${job} left`, async () => (await jobsNamed(job)).length === 0, 30_000);
  });

  it('a step waiting for resources past SFLOW_SLURM_STEP_START_TIMEOUT: FAILED naming the bound', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-busy`;
    const alloc = await slurm.exec('salloc', [
      '-N1',
      '-w',
      'n1',
      '-c2',
      '--no-shell',
      '-J',
      job,
      '-t',
      '00:10:00',
    ]);
    expect(alloc.exitCode, String(alloc.stderr)).toBe(0);
    const id = /Granted job allocation (\d+)/.exec(String(alloc.stderr))?.[1] ?? '';
    // a step of the test's own that holds both CPUs of n1 (it does not overlap)
    const holder = slurm.exec('srun', ['--jobid', id, '-n1', '-c2', '--exact', 'sleep', '120'], {
      timeout: 150_000,
    });
    try {
      await until('the holding step', async () => (await stepsOfJobs([id])).length > 0, 30_000);
      const frag = clusterFragment(cwd, { nodes: 1 });
      const wf = join(cwd, 'wf.yaml');
      writeFileSync(
        wf,
        [
          "version: '0.1'",
          'operators:',
          '  - name: excl',
          '    type: srun',
          '    overlap: false',
          '    cpus_per_task: 2',
          'workflow:',
          '  name: busy',
          '  tasks:',
          '    - name: waits',
          '      operator: excl',
          "      script: ['echo ran']",
        ].join('\n'),
      );
      const r = await runSflow(['run', '-f', frag, '-f', wf], {
        cwd,
        env: { SLURM_JOB_ID: id, SLURM_JOB_NODELIST: 'n1', SFLOW_SLURM_STEP_START_TIMEOUT: '5' },
        timeoutMs: 120_000,
      });
      const out = r.stdout + r.stderr;
      expect(r.code, out).toBe(1);
      const fin = finished(r.runDir(), 'waits');
      expect(fin?.status).toBe('FAILED');
      expect(fin?.reason).toMatch(/did not start within 5 s \(SFLOW_SLURM_STEP_START_TIMEOUT\)/);
      expect(fin?.reason).toMatch(/other steps may hold the nodes' resources/);
      expect(fin?.reason).toMatch(/srun: Cancelled pending job step/); // srun was still waiting for its step
      expect(readFileSync(join(r.runDir(), 'waits', 'waits.log'), 'utf8')).not.toContain('ran');
      // only the test's own step is left in its job
      expect(await stepsOfJobs([id])).toHaveLength(1);
    } finally {
      await slurm.exec('scancel', [id]);
      await holder;
    }
  });
});
