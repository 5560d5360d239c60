/**
 * `sflow run` on the Slurm test cluster through the built CLI: the spec examples that run on the
 * local backend (diamond DAG, services + client, GPU slices) run here by adding only a backend
 * fragment, with their outputs in the same layout; a 2-node task's environment; GPU tasks on the
 * devices the plan chose (the in-step selection with the fake nvidia-smi inside the steps, also
 * renumbered as in a container); a plan the step cannot honour exits 97; the hardware monitor
 * samples both nodes through `srun --overlap` collectors; a 2-node GPU task writes one GPU audit
 * record per node. After each run squeue is empty of it.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { taskLog, taskTable } from '../../helpers/run-dir.js';
import { sharedMissing, sharedPath } from '../../helpers/shared.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const EX = (f: string) => sharedPath('spec', 'examples', f);
const noShared = sharedMissing('spec/examples');
const itShared = noShared && process.env.SFLOW_REQUIRE_SHARED !== '1' ? it.skip : it;
if (noShared) console.warn(`[slurm] spec example runs skipped: ${noShared}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const statuses = (runDir: string) =>
  Object.fromEntries(Object.entries(taskTable(runDir)).map(([k, v]) => [k, v.status]));

/** a job of this run is no longer queued (owned allocation cancelled at the end) */
async function queueEmptyOf(jobName: string) {
  await until(`squeue empty of ${jobName}`, async () => (await jobsNamed(jobName)).length === 0, 10_000);
}

function recipe(cwd: string, name: string, yaml: string): string {
  const p = join(cwd, `${name}.yaml`);
  writeFileSync(p, yaml);
  return p;
}

describeWithEngines('sflow run on Slurm', [slurm], () => {
  itShared('02 diamond DAG: same tasks, files and layout as on the local backend', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-dag`;
    const frag = clusterFragment(cwd, { jobName: job });
    const r = await runSflow(['run', '-f', EX('02_dag_and_output_dirs.yaml'), '-f', frag], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    expect(statuses(run)).toEqual({
      fetch: 'COMPLETED',
      count_words: 'COMPLETED',
      count_lines: 'COMPLETED',
      report: 'COMPLETED',
    });
    expect(existsSync(join(run, 'corpus.txt'))).toBe(true);
    expect(readFileSync(join(run, 'count_words', 'words.txt'), 'utf8').trim()).toBe('9');
    expect(readFileSync(join(run, 'count_lines', 'lines.txt'), 'utf8').trim()).toBe('3');
    expect(taskLog(run, 'report')).toContain('words=9 lines=3');
    for (const f of ['sflow.log', 'sflow_summary.log', 'events.jsonl', 'handles.jsonl', 'report.html'])
      expect(existsSync(join(run, f)), f).toBe(true);
    // the steps ran as srun steps of one salloc job, recorded in the ledger and the command trace
    expect(readFileSync(join(run, 'slurm_cmds.log'), 'utf8')).toContain('srun --jobid');
    expect(readFileSync(join(run, 'sflow_summary.log'), 'utf8')).toMatch(/salloc\s+1\s+0/);
    await queueEmptyOf(job);
  });

  itShared('06 services with readiness probes and a client', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-svc`;
    const frag = clusterFragment(cwd, { jobName: job });
    const [site, api] = [await freePort(), await freePort()];
    const r = await runSflow(
      [
        'run',
        '-f',
        EX('06_service_readiness.yaml'),
        '-f',
        frag,
        '-s',
        `SITE_PORT=${site}`,
        '-s',
        `API_PORT=${api}`,
      ],
      { cwd },
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const log = taskLog(run, 'client');
    expect(log).toContain('site says: hello from static_site');
    expect(log).toContain('api says: ok');
    expect(statuses(run)).toMatchObject({ client: 'COMPLETED', api: 'READY', static_site: 'READY' });
    await queueEmptyOf(job);
  });

  itShared('12 GPU slices: every step exports the planned devices, audited per node', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-gpu`;
    // the example's backend is named `box`: the fragment replaces it (same name), 2 nodes × 4 GPUs
    const frag = clusterFragment(cwd, { name: 'box', jobName: job, gpusPerNode: 4 });
    const r = await runSflow(['run', '-f', EX('12_gpu_slices_and_task_context.yaml'), '-f', frag], {
      cwd,
      fakeGpus: 4,
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    expect(taskLog(run, 'decode')).toContain('decode sees 0,1,2,3 on n2 (1 node(s))');
    expect(taskLog(run, 'prefill_0')).toContain('prefill 0 sees 0,1 on n1');
    expect(taskLog(run, 'prefill_1')).toContain('prefill 1 sees 2,3 on n1');
    const audit = readFileSync(join(run, 'prefill_1', 'sflow_gpus.log'), 'utf8');
    expect(audit).toContain('node: n1');
    expect(audit).toContain('planned_indices: 2,3');
    expect(audit).toMatch(/planned_uuids: GPU-\S+0002\S*,GPU-\S+0003/);
    expect(audit).toContain('mode: uuid');
    expect(audit).toContain('selected: 2,3');
    const summary = readFileSync(join(run, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/n1: 0=GPU-\S+ 1=GPU-\S+ 2=GPU-\S+ 3=GPU-\S+/); // Node Topology, index → UUID
    expect(summary).toMatch(
      /decode\s+n2\s+CUDA_VISIBLE_DEVICES=0,1,2,3\s+n2: CUDA_VISIBLE_DEVICES=0,1,2,3 \(GPU-/,
    );
    await queueEmptyOf(job);
  });

  it('a 2-node task: SFLOW_TASK_NUM_NODES=2, distinct node indices, the leader address', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-two`;
    const frag = clusterFragment(cwd, { jobName: job });
    const wf = recipe(
      cwd,
      'two',
      [
        "version: '0.1'",
        'workflow:',
        '  name: two_nodes',
        '  tasks:',
        '    - name: span',
        '      resources: {nodes: {count: 2}}',
        '      script:',
        '        - echo "on=$SLURMD_NODENAME n=$SFLOW_TASK_NUM_NODES i=$SFLOW_TASK_NODE_INDEX leader=$SFLOW_LEADER_ADDRESS names=$SFLOW_TASK_ASSIGNED_NODE_NAMES"',
      ].join('\n'),
    );
    const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    // a healthy run: every salloc, scontrol and scancel answered (External Command Health)
    expect(readFileSync(join(r.runDir(), 'sflow_summary.log'), 'utf8')).toMatch(
      /^Verdict: OK: \d+ call\(s\), none failed/m,
    );
    const lines = taskLog(r.runDir(), 'span').trim().split('\n').sort();
    // srun --label prefixes each rank's lines
    expect(lines).toEqual([
      '0: on=n1 n=2 i=0 leader=127.0.0.1 names=n1,n2',
      '1: on=n2 n=2 i=1 leader=127.0.0.1 names=n1,n2',
    ]);
    await queueEmptyOf(job);
  });

  it('GPU tasks get the planned cards by UUID, also when the step renumbers them; an impossible plan exits 97', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-sel`;
    const frag = clusterFragment(cwd, { jobName: job, gpusPerNode: 2 });
    const wf = recipe(
      cwd,
      'sel',
      [
        "version: '0.1'",
        'operators:',
        '  - {name: plain, type: srun}',
        // a container renumbers the cards it holds from 0: here it holds only GPU 1
        '  - {name: renumbered, type: srun, extra_args: ["--export=ALL,FAKE_NVIDIA_SMI_VISIBLE=1"]}',
        // a step that can see only GPU 0 cannot honour a plan for GPU 1
        '  - {name: wrong, type: srun, extra_args: ["--export=ALL,FAKE_NVIDIA_SMI_VISIBLE=0"]}',
        'workflow:',
        '  name: gpu_select',
        '  tasks:',
        '    - name: host_numbered',
        '      operator: plain',
        '      resources: {nodes: {indices: [1]}, gpus: {indices: [1]}}',
        '      script: [\'echo "cvd=$CUDA_VISIBLE_DEVICES plan=$SFLOW_GPU_PLAN uuids=$SFLOW_PLANNED_GPU_UUIDS"\']',
        '    - name: in_container',
        '      operator: renumbered',
        '      depends_on: [host_numbered]',
        '      resources: {nodes: {indices: [1]}, gpus: {indices: [1]}}',
        '      script: [\'echo "cvd=$CUDA_VISIBLE_DEVICES plan=$SFLOW_GPU_PLAN"\']',
        '    - name: impossible',
        '      operator: wrong',
        '      depends_on: [in_container]',
        '      resources: {nodes: {indices: [0]}, gpus: {indices: [1]}}',
        "      script: ['echo should-not-run']",
      ].join('\n'),
    );
    const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd, fakeGpus: 2 });
    expect(r.code).toBe(1);
    const run = r.runDir();
    expect(taskLog(run, 'host_numbered')).toMatch(/^0: cvd=1 plan=1 uuids=GPU-0000a1b2-0001-\S+\n$/);
    expect(readFileSync(join(run, 'host_numbered', 'sflow_gpus.log'), 'utf8')).toContain('selected: 1');
    // the card the plan chose is index 0 inside the renumbered step: matched by its UUID
    expect(taskLog(run, 'in_container')).toBe('0: cvd=0 plan=1\n');
    const audit = readFileSync(join(run, 'in_container', 'sflow_gpus.log'), 'utf8');
    expect(audit).toMatch(/visible: 0,GPU-0000a1b2-0001-/);
    expect(audit).toContain('selected: 0');
    const bad = taskLog(run, 'impossible');
    expect(bad).not.toContain('should-not-run');
    expect(bad).toMatch(
      /the GPU plan cannot be honoured on n1: planned GPU 1 \(GPU-\S+\) is not visible in this step/,
    );
    expect(readFileSync(join(run, 'impossible', 'sflow_gpus.log'), 'utf8')).toContain(
      'result: ABORT exit 97',
    );
    expect(taskTable(run).impossible).toMatchObject({ status: 'FAILED', exit: '97' });
    await queueEmptyOf(job);
  });

  it('a 2-node GPU task: one GPU audit log per node (sflow_gpus.<node>.log) with the planned card', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-gpu2`;
    const frag = clusterFragment(cwd, { jobName: job, gpusPerNode: 2 });
    const wf = recipe(
      cwd,
      'gpu2',
      [
        "version: '0.1'",
        'workflow:',
        '  name: gpu_two_nodes',
        '  tasks:',
        '    - name: pair',
        '      resources: {nodes: {count: 2}, gpus: {indices: [1]}}',
        '      script: [\'echo "on=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES"\']',
      ].join('\n'),
    );
    const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd, fakeGpus: 2 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const dir = join(r.runDir(), 'pair');
    expect(taskLog(r.runDir(), 'pair').trim().split('\n').sort()).toEqual([
      '0: on=n1 cvd=1',
      '1: on=n2 cvd=1',
    ]);
    // one record per node, none under the single-node name
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('sflow_gpus'))
        .sort(),
    ).toEqual(['sflow_gpus.n1.log', 'sflow_gpus.n2.log']);
    for (const [i, node] of ['n1', 'n2'].entries()) {
      const audit = readFileSync(join(dir, `sflow_gpus.${node}.log`), 'utf8');
      const field = (k: string) => new RegExp(`^${k}: (.*)$`, 'm').exec(audit)?.[1];
      expect(field('node')).toBe(node);
      expect(field('node_index')).toBe(`${i} of 2`);
      expect(field('planned_indices')).toBe('1');
      // the planned card is card 1 of this node's own UUID table (the driver's topology probe)
      const table = field('node_uuids')?.split(',') ?? [];
      expect(table).toHaveLength(2);
      expect(table[1]).toMatch(/^GPU-/);
      expect(field('planned_uuids')).toBe(table[1]);
      expect(field('selected')).toBe('1');
      expect(field('result')).toBe('OK');
    }
    await queueEmptyOf(job);
  });

  it('monitor: one srun --overlap collector per node samples both nodes', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-mon`;
    const frag = clusterFragment(cwd, { jobName: job });
    const wf = recipe(
      cwd,
      'mon',
      [
        "version: '0.1'",
        'workflow:',
        '  name: monitored',
        '  monitor: {interval: 500}',
        '  tasks:',
        '    - name: work',
        '      resources: {nodes: {count: 2}}',
        "      script: ['sleep 3']",
      ].join('\n'),
    );
    const r = await runSflow(['run', '-f', frag, '-f', wf], { cwd, fakeGpus: 2 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    const raw = readdirSync(join(run, 'sflow_monitor', 'raw')).sort();
    expect(raw).toEqual(expect.arrayContaining(['cpu_monitor_node_0_n1.log', 'cpu_monitor_node_1_n2.log']));
    expect(raw).toEqual(expect.arrayContaining(['gpu_monitor_node_0_n1.log', 'gpu_monitor_node_1_n2.log']));
    const gpu = readFileSync(join(run, 'sflow_monitor', 'raw', 'gpu_monitor_node_1_n2.log'), 'utf8');
    expect(gpu.trim().split('\n').length).toBeGreaterThan(1);
    expect(readFileSync(join(run, 'sflow_monitor.log'), 'utf8')).not.toMatch(/not sampled/);
    await queueEmptyOf(job);
  });
});
