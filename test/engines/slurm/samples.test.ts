/**
 * The Slurm samples end to end on the test cluster (2 nodes x 2 GRES GPUs, no pyxis), through
 * the built CLI, with only the stand-ins (test/fixtures/standins) and the fake nvidia-smi first
 * on PATH and the cluster set with -s (account, partition, GPUs; empty images = no container):
 * hello world on both nodes; the three GPU placement modes; the monitor with its log-marker
 * window; the placement matrix proving every slice by UUID; monitor_mixed's two pools, GPU reuse
 * and clipped report; Dynamo + TensorRT-LLM disaggregated with a benchmark sweep; the modular
 * recipe on backends/slurm.yaml (Dynamo + SGLang) and on backends/slurm_mpi.yaml (Dynamo +
 * TensorRT-LLM, one MPI world of srun ranks over both nodes). Readiness gates each client,
 * results are parsed and checked, and after each run no job and no process of it is left.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { taskLog, taskTable } from '../../helpers/run-dir.js';
import {
  QUICK_BENCH,
  modularFiles,
  modularPortNames,
  portArgs,
  processesOf,
  resultValues,
  sample,
  sets,
  standinEnv,
  standinsMissing,
  modularServers,
  notReadyBefore,
  standinStateDirs,
  newStandinState,
} from '../../helpers/standins.js';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, jobsNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) for (const w of WORKFLOWS) await cancelNamed(w);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const WORKFLOWS = [
  'slurm_hello_world',
  'slurm_gpu_indices',
  'slurm_monitor',
  'gpu_placement_matrix',
  'monitor_mixed_slurm',
  'dynamo_trtllm_disagg',
  'modular_inference',
];
const missing = standinsMissing();
// busybox comes with the engines' packages: with the cluster up and no busybox, that is a failure
if (missing && !slurm.skip) throw new Error(missing);

const CLUSTER = sets({
  SLURM_ACCOUNT: TAG,
  SLURM_PARTITION: slurm.get('SFLOW_TEST_SLURM_PARTITION') ?? 'debug',
});
const statuses = (runDir: string) =>
  Object.fromEntries(Object.entries(taskTable(runDir)).map(([k, v]) => [k, v.status]));

/** runs a sample with the stand-ins; checks success and that nothing of the run is left */
async function run(files: string[], extra: string[], fakeGpus = 2) {
  const cwd = newCwd(dirs);
  const state = standinStateDirs();
  const r = await runSflow(['run', ...files.flatMap((f) => ['-f', f]), ...extra], {
    cwd,
    env: standinEnv(process.env, { fakeGpus }),
    timeoutMs: 180_000,
  });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  const runDir = r.runDir();
  const workflow = /^(.*)-\d{8}-\d{6}-[0-9a-f]+$/.exec(runDir.split('/').pop()!)![1];
  await until(`squeue empty of ${workflow}`, async () => (await jobsNamed(workflow)).length === 0, 15_000);
  expect(await processesOf(runDir)).toEqual([]);
  expect(await newStandinState(state)).toEqual([]);
  return runDir;
}

describeWithEngines('the Slurm samples on the test cluster, with the stand-ins', [slurm], () => {
  it('hello_world: one step on each node, then the leader summary', async () => {
    const d = await run([sample('slurm/hello_world')], CLUSTER);
    expect(taskLog(d, 'hello').trim().split('\n').sort()).toEqual([
      expect.stringMatching(/^0: hello from \S+, node 0 of 2$/),
      expect.stringMatching(/^1: hello from \S+, node 1 of 2$/),
    ]);
    expect(taskLog(d, 'goodbye')).toMatch(/all 2 nodes said hello; leader was 127\.0\.0\.1/);
  });

  it('gpu_indices: a count, pinned indices in the written order, a slice fanned out over both nodes', async () => {
    const d = await run([sample('slurm/gpu_indices')], [...CLUSTER, ...sets({ ALLOC_GPUS_PER_NODE: 2 })], 8);
    expect(taskLog(d, 'by_count')).toMatch(/sees CUDA_VISIBLE_DEVICES=0,1,2,3$/m);
    expect(taskLog(d, 'pinned')).toMatch(/sees CUDA_VISIBLE_DEVICES=6,4$/m);
    expect(taskLog(d, 'fanned_out').match(/fanned_out node \d\/2 on \S+ sees 1,0/g)).toHaveLength(2);
  });

  it('monitor: the train task is reported over its marker window next to the whole run', async () => {
    const d = await run(
      [sample('slurm/monitor')],
      [...CLUSTER, ...sets({ GPUS_PER_NODE: 2, TRAIN_SECONDS: 3 })],
    );
    const window = JSON.parse(
      readFileSync(join(d, 'sflow_monitor', 'windowed', 'train', 'window.json'), 'utf8'),
    );
    expect(window.status).toBe('resolved');
    expect(existsSync(join(d, 'sflow_monitor', 'lifecycle', 'workflow', 'summary.csv'))).toBe(true);
    expect(readFileSync(join(d, 'sflow_monitor', 'windowed', 'train', 'timeline.csv'), 'utf8')).toMatch(
      /gpu/,
    );
  });

  it('gpu_placement_matrix: every case holds the cards it was planned, by UUID, on each node', async () => {
    const d = await run([sample('slurm/gpu_placement_matrix')], [...CLUSTER, '-s', 'PLACEMENT_IMAGE='], 4);
    expect(Object.values(statuses(d)).every((s) => s === 'COMPLETED')).toBe(true);
    for (const t of [
      'bare_low',
      'bare_high',
      'boxed_low',
      'boxed_high',
      'boxed_one_high',
      'count_2x2_0',
      'count_2x2_1',
    ])
      expect(taskLog(d, t), t).toMatch(
        new RegExp(`^0: OK: ${t} on n\\d holds host GPU\\(s\\) [0-9,]+, matched by UUID$`, 'm'),
      );
    for (const t of ['multinode_high', 'count_all'])
      expect(taskLog(d, t).match(/OK: \S+ on n[12] holds/g), t).toHaveLength(2);
    expect(taskLog(d, 'verify_disjoint').match(/held disjoint GPUs/g)).toHaveLength(3);
  });

  it('monitor_mixed: two pools, servers freeing their GPUs once READY, the servers charted over the measured phase', async () => {
    const d = await run(
      [sample('slurm/monitor_mixed')],
      [
        ...sets({ SLURM_ACCOUNT: TAG, PARTITION_A: 'debug', PARTITION_B: 'debug', GPUS_PER_NODE: 2 }),
        ...sets({ REQUESTS: 4, OSL: 8, MODEL_PATH: '/m' }),
        ...['SERVER_IMAGE=', 'CLIENT_IMAGE='].flatMap((s) => ['-s', s]),
        ...(await portArgs('BASE_PORT')),
      ],
    );
    expect(statuses(d)).toMatchObject({
      server_0: 'READY',
      server_1: 'READY',
      benchmark: 'COMPLETED',
      cpu_report: 'COMPLETED',
    });
    expect(resultValues(d, 'benchmark')).toEqual({ requests_per_replica: [4, 4] });
    expect(notReadyBefore(d, 'benchmark', ['server_0', 'server_1'])).toEqual([]);
    expect(taskLog(d, 'cpu_report')).toContain('throughput rows: 2');
    const win = join(d, 'sflow_monitor', 'windowed', 'server__monitored_by__benchmark');
    expect(JSON.parse(readFileSync(join(win, 'window.json'), 'utf8')).status).toBe('resolved');
    expect(readdirSync(join(d, 'sflow_monitor', 'lifecycle'))).toEqual(
      expect.arrayContaining(['workflow', 'server__monitored_by__benchmark']),
    );
  });

  it('dynamo_trtllm_disagg: workers of srun ranks on both nodes register, a sweep of two benchmarks, the workers monitored', async () => {
    const d = await run(
      [sample('slurm/dynamo_trtllm_disagg')],
      [
        ...CLUSTER,
        ...sets({ GPUS_PER_NODE: 2, SLURM_MPI: 'none', CTX_TP_SIZE: 1, GEN_TP_SIZE: 2, MODEL_PATH: '/m' }),
        ...sets({ ISL: 16, OSL: 8, ROUNDS: 2, PROBE_INTERVAL: 1, CONCURRENCY: '[2,3]' }),
        ...['DYNAMO_IMAGE=', 'AIPERF_IMAGE='].flatMap((s) => ['-s', s]),
        ...(await portArgs(
          'HTTP_PORT',
          'ETCD_PORT',
          'NATS_PORT',
          'PREFILL_SYSTEM_PORT',
          'DECODE_SYSTEM_PORT',
        )),
      ],
    );
    expect(resultValues(d, 'benchmark_2')).toMatchObject({ request_count: 4, errors: 0 });
    expect(resultValues(d, 'benchmark_3')).toMatchObject({ request_count: 6, errors: 0 });
    expect(notReadyBefore(d, 'benchmark_2', ['prefill_server_0', 'decode_server_0'])).toEqual([]);
    const decode = taskLog(d, 'decode_server_0');
    expect(decode).toMatch(/^0: .*Model registration succeeded: Qwen3-0\.6B-FP8 \(decode\)$/m);
    expect(decode).toMatch(/^1: \[trtllm-llmapi-launch\] rank 1 of 2: MPI worker of rank 0$/m);
    expect(taskLog(d, 'nats_server')).toMatch(/message on 'dynamo\.register\.trtllm\.prefill'/);
    for (const b of ['benchmark_2', 'benchmark_3'])
      expect(
        JSON.parse(
          readFileSync(
            join(d, 'sflow_monitor', 'windowed', `decode_server__monitored_by__${b}`, 'window.json'),
            'utf8',
          ),
        ).status,
      ).toBe('resolved');
  });

  it('modular on backends/slurm.yaml: Dynamo + SGLang aggregated', async () => {
    const d = await run(modularFiles('slurm', 'dynamo_sglang'), [
      ...CLUSTER, ...QUICK_BENCH, ...sets({ GPUS_PER_NODE: 2, SERVER_GPUS: 2 }),
      ...['SERVER_IMAGE=', 'CLIENT_IMAGE='].flatMap((s) => ['-s', s]),
      ...(await portArgs(...modularPortNames('dynamo_sglang'))),
    ]); // prettier-ignore
    expect(resultValues(d, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
    expect(taskLog(d, 'server')).toContain('Model registration succeeded: Qwen3-0.6B (agg)');
    expect(notReadyBefore(d, 'benchmark', modularServers('dynamo_sglang'))).toEqual([]);
    expect(readFileSync(join(d, 'server', 'sflow_gpus.log'), 'utf8')).toContain('selected: 0,1');
  });

  it('modular on backends/slurm_mpi.yaml: Dynamo + TensorRT-LLM, one MPI world of srun ranks over both nodes', async () => {
    const d = await run(modularFiles('slurm_mpi', 'dynamo_trtllm'), [
      ...CLUSTER, ...QUICK_BENCH, ...sets({ NUM_NODES: 2, GPUS_PER_NODE: 1, SERVER_GPUS: 2, SLURM_MPI: 'none' }),
      ...['SERVER_IMAGE=', 'CLIENT_IMAGE='].flatMap((s) => ['-s', s]),
      ...(await portArgs(...modularPortNames('dynamo_trtllm'))),
    ]); // prettier-ignore
    expect(resultValues(d, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
    expect(notReadyBefore(d, 'benchmark', ['server'])).toEqual([]);
    const log = taskLog(d, 'server');
    expect(log).toMatch(/^0: \[trtllm-llmapi-launch\] rank 0 of 2 runs: python3 -m dynamo\.trtllm/m);
    expect(log).toMatch(/^1: \[trtllm-llmapi-launch\] rank 1 of 2: MPI worker of rank 0$/m);
    expect(
      readdirSync(join(d, 'server'))
        .filter((f) => f.startsWith('sflow_gpus'))
        .sort(),
    ).toEqual(['sflow_gpus.n1.log', 'sflow_gpus.n2.log']);
  });
});
