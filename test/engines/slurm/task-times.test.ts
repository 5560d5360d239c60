/**
 * What a run on Slurm records is what happened (issue 30): a step that sleeps 2 s and one that
 * sleeps 0.3 s have, in events.jsonl, the summary and the report, the durations and start times
 * the cluster's own slurmd logged for their tasks ("[J.S] task 0 (pid) started" … "exited", to the
 * millisecond; this cluster keeps no accounting). The dry-run's job and step names are the
 * ones the run gives Slurm.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { expectTimingRun, timingWorkflow, type EngineRecord } from '../../helpers/task-times.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, slurm } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `[2026-12-02T17:32:15.328] …` lines of every slurmd log, as [ms, text] */
function slurmdLog(): Array<[number, string]> {
  const dir = join(slurm.get('SFLOW_TEST_SLURM_DIR'), 'log');
  const out: Array<[number, string]> = [];
  for (const f of readdirSync(dir).filter((n) => /^slurmd-.*\.log$/.test(n)))
    for (const l of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const m = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$/.exec(l);
      if (m) out.push([new Date(m[1]).getTime(), m[2]]); // the daemons' local time, like ours
    }
  return out;
}

/**
 * The steps of a job as slurmd logged their tasks (`SlurmdDebug=verbose`: "[J.S] task 0 (pid)
 * started" … "exited"), in start order; a step of several tasks spans its first start to its last exit.
 */
function loggedSteps(jobId: string): Array<{ id: string } & EngineRecord> {
  const steps = new Map<string, { id: string } & EngineRecord>();
  for (const [t, text] of slurmdLog()) {
    const m = new RegExp(`^\\[(${jobId}\\.\\d+)\\] task \\d+ \\(\\d+\\) (started|exited)`).exec(text);
    if (!m) continue;
    const s = steps.get(m[1]) ?? { id: m[1], start: Infinity, end: -Infinity };
    if (m[2] === 'started') s.start = Math.min(s.start, t);
    else s.end = Math.max(s.end, t);
    steps.set(m[1], s);
  }
  if (steps.size === 0)
    throw new Error(
      `slurmd logged no task of job ${jobId}: the cluster predates SlurmdDebug=verbose (scripts/engines/slurm.sh down, then up)`,
    );
  return [...steps.values()].sort((a, b) => a.start - b.start);
}

const jobOf = (runDir: string): string =>
  JSON.parse(readFileSync(join(runDir, 'slurm_allocations.jsonl'), 'utf8').split('\n')[0]).jobId as string;

describeWithEngines('task times and names on Slurm', [slurm], () => {
  it('a 2 s and a 0.3 s step: durations and Gantt starts as slurmd logged them', async () => {
    const cwd = newCwd(dirs);
    const wf = join(cwd, 'times.yaml');
    writeFileSync(wf, timingWorkflow(`${TAG}-times`));
    const r = await runSflow(['run', '-f', wf, '-f', clusterFragment(cwd, { nodes: 1 })], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    // `short` depends on `two`: the job's first step is two's, the second short's
    const steps = loggedSteps(jobOf(run));
    expect(steps.map((s) => s.id.split('.')[1])).toEqual(['0', '1']);
    expectTimingRun(run, { two: steps[0], short: steps[1] });
  });

  it("the dry-run's salloc job name and srun step names are the run's", async () => {
    const cwd = newCwd(dirs);
    const wf = join(cwd, 'names.yaml');
    writeFileSync(wf, timingWorkflow(`${TAG}-names`));
    const frag = clusterFragment(cwd, { nodes: 1 });
    const dry = await runSflow(['run', '-f', wf, '-f', frag, '--dry-run'], { cwd });
    expect(dry.code, dry.stderr).toBe(0);
    const names = (text: string) => [...text.matchAll(/--job-name (\S+)/g)].map((m) => m[1]);
    const planned = names(dry.stdout);
    expect(planned).toEqual([`${TAG}-names`, 'two', 'short']);
    const r = await runSflow(['run', '-f', wf, '-f', frag], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const job = await slurm.exec('scontrol', ['-o', 'show', 'job', jobOf(run)]);
    const jobName = /\bJobName=(\S+)/.exec(String(job.stdout))?.[1];
    const steps = names(readFileSync(join(run, 'slurm_cmds.log'), 'utf8'));
    expect([jobName, ...steps.sort()]).toEqual([planned[0], ...planned.slice(1).sort()]);
  });
});
