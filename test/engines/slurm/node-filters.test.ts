/**
 * `include_nodes` / `exclude_nodes` on the Slurm test cluster (nodes n1, n2): a run that allocates
 * asks salloc for `--nodelist` / `--exclude` and its one-node task lands on the node the filter
 * leaves (n2, where Slurm's own choice would be n1); inside a job it did not make (SLURM_JOB_ID,
 * two nodes) the filters pick among the job's nodes, and a node the job lacks is an error before
 * any task starts. The queue is empty of the run's own jobs afterwards.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { taskLog } from '../../helpers/run-dir.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** one task per node of the backend, each printing the Slurm node it ran on */
function workflow(cwd: string, nodes: number): string {
  const p = join(cwd, 'wf.yaml');
  writeFileSync(
    p,
    [
      "version: '0.1'",
      'workflow:',
      '  name: filters',
      '  tasks:',
      '    - name: where',
      `      resources: {nodes: {count: ${nodes}}}`,
      "      script: ['echo on=$SLURMD_NODENAME']",
    ].join('\n') + '\n',
  );
  return p;
}

/** a fragment with the cluster backend plus filter lines */
function fragment(cwd: string, nodes: number, jobName: string | undefined, filters: string[]): string {
  const path = clusterFragment(cwd, { nodes, ...(jobName ? { jobName } : {}) });
  writeFileSync(path, readFileSync(path, 'utf8') + filters.map((f) => `    ${f}\n`).join(''));
  return path;
}

const ranOn = (runDir: string) =>
  taskLog(runDir, 'where')
    .split('\n')
    .map((l) => /on=(\S+)/.exec(l)?.[1])
    .filter(Boolean)
    .sort();

describeWithEngines('Slurm include_nodes / exclude_nodes', [slurm], () => {
  it.each([
    ['include_nodes: [n2]', '--nodelist n2'],
    ['exclude_nodes: [n1]', '--exclude n1'],
  ])('%s: salloc gets %s and the task runs on n2', async (filter, flag) => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-filter-${flag.slice(2, 6)}`;
    const frag = fragment(cwd, 1, job, [filter]);
    const dry = await runSflow(['run', '--dry-run', '-f', frag, '-f', workflow(cwd, 1)], { cwd });
    expect(dry.code, dry.stderr + dry.stdout).toBe(0);
    expect(dry.stdout).toContain(flag);
    expect(dry.stdout + dry.stderr).not.toContain('not implemented');

    const r = await runSflow(['run', '-f', frag, '-f', workflow(cwd, 1)], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const salloc = readFileSync(join(run, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; tool: string; args: string[] })
      .filter((t) => t.type === 'external_call' && t.tool === 'salloc');
    expect(salloc).toHaveLength(1);
    expect(salloc[0].args.join(' ')).toContain(flag);
    expect(ranOn(run)).toEqual(['n2']);
    await until(`squeue empty of ${job}`, async () => (await jobsNamed(job)).length === 0, 10_000);
  });

  it('inside a two-node job: the filters choose among its nodes; a node it lacks is an error', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-filter-inherit`;
    const alloc = await slurm.exec('salloc', ['-N2', '--no-shell', '-J', job, '-t', '00:10:00']);
    expect(alloc.exitCode, String(alloc.stderr)).toBe(0);
    const id = /Granted job allocation (\d+)/.exec(String(alloc.stderr))?.[1] ?? '';
    expect(id).not.toBe('');
    try {
      const nodes = String((await slurm.exec('squeue', ['-h', '-j', id, '-o', '%N'])).stdout).trim();
      const env = { SLURM_JOB_ID: id, SLURM_JOB_NODELIST: nodes };

      const ex = await runSflow(
        ['run', '-f', fragment(cwd, 2, undefined, ['exclude_nodes: [n1]']), '-f', workflow(cwd, 1)],
        { cwd, env },
      );
      expect(ex.code, ex.stderr + ex.stdout).toBe(0);
      expect(ex.stdout + ex.stderr).toContain(`include_nodes/exclude_nodes: using n2 of Slurm job ${id}`);
      expect(ranOn(ex.runDir())).toEqual(['n2']);
      rmSync(join(cwd, 'sflow_output'), { recursive: true, force: true });

      const inc = await runSflow(
        ['run', '-f', fragment(cwd, 2, undefined, ['include_nodes: [n1, n2]']), '-f', workflow(cwd, 2)],
        { cwd, env },
      );
      expect(inc.code, inc.stderr + inc.stdout).toBe(0);
      expect(ranOn(inc.runDir())).toEqual(['n1', 'n2']);
      rmSync(join(cwd, 'sflow_output'), { recursive: true, force: true });

      const lacking = await runSflow(
        ['run', '-f', fragment(cwd, 2, undefined, ["include_nodes: ['n[2-3]']"]), '-f', workflow(cwd, 1)],
        { cwd, env },
      );
      expect(lacking.code).toBe(1);
      expect(lacking.stderr + lacking.stdout).toContain(
        `include_nodes names n3, which Slurm job ${id} (the job this run is inside) does not have`,
      );
      // the job it did not make is still there
      expect(await jobsNamed(job)).toEqual([id]);
    } finally {
      await slurm.exec('scancel', [id]);
    }
  });
});
