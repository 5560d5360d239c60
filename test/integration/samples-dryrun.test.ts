/**
 * Every shipped sample dry-runs on its own backend (in process: the CLI's `main`), with what
 * its plan must show: the platform and operator of each task, GPU placement, sweeps, uploads,
 * monitor reports. The modular serving folder dry-runs in every supported combination of backend
 * and workload: the servers on the backend's `server` operator, the benchmark after every
 * server (their `required_by`), multi-rank servers started the backend's way. Nothing is
 * written by a dry-run. The end-to-end runs are in cli-sample.test.ts (local) and the engine
 * suites (test/engines/*\/samples.test.ts).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listSamples } from '../../src/samples/catalog.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';
import { MODULAR, SAMPLES, modularFiles } from '../helpers/standins.js';

const cwd = mkdtempSync(join(tmpdir(), 'sflow-samples-dry-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** task name → its block of the printed task plan */
function taskPlan(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  const parts = stdout.split(/^ {2}\[\d+\] (\S+)\n/m);
  // a block runs to the next task (a command may span lines); the last one also holds what follows
  for (let i = 1; i < parts.length; i += 2) out[parts[i]] = parts[i + 1];
  return out;
}

async function dryRun(files: string[], extra: string[] = []) {
  const r = await sflowInProcess(['run', ...files.flatMap((f) => ['-f', f]), '--dry-run', ...extra], { cwd });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  expect(r.stdout).toContain('Configuration is valid');
  expect(readdirSync(cwd)).toEqual([]); // a dry-run writes nothing
  return { out: r.stdout, tasks: taskPlan(r.stdout) };
}

const field = (block: string, name: string) => new RegExp(`^ {6}${name}: (.*)$`, 'm').exec(block)?.[1];
const PLATFORM: Record<string, string> = {
  local: 'local',
  slurm: 'slurm',
  docker: 'docker',
  kubernetes: 'kubernetes',
};

type Check = (p: { out: string; tasks: Record<string, string> }) => void;
const cvd = (b: string) => field(b, 'CUDA_VISIBLE_DEVICES');

/** what each sample's plan must show besides being valid on its platform */
const CHECKS: Record<string, Check> = {
  'local/storage_upload': ({ tasks }) => {
    expect(tasks.measure).toMatch(
      /upload: metrics\.csv → results:\S+\/measure\/metrics\.csv \(on_error=warn\)/,
    );
    expect(tasks.report).toMatch(/upload: report\.log → results:\S+\/report\/report\.log \(on_error=fail\)/);
  },
  'local/storage_upload_all': ({ out }) =>
    expect(out).toMatch(
      /Planned workflow upload: run directory \(zip\) → archive:archive\/.* = s3:\/\/my-results-bucket\/sflow-samples\/archive\/storage_upload_all-\S+\.zip \(on_error=fail\)/,
    ),
  'slurm/gpu_indices': ({ tasks }) => {
    expect(cvd(tasks.by_count)).toBe('0,1,2,3');
    expect(cvd(tasks.pinned)).toBe('6,4');
    expect(field(tasks.fanned_out, 'nodes')).toBe('cluster-node0,cluster-node1');
    expect(cvd(tasks.fanned_out)).toBe('1,0');
  },
  'slurm/gpu_placement_matrix': ({ tasks }) => {
    expect(cvd(tasks.bare_low)).toBe('0,1');
    expect(cvd(tasks.bare_high)).toBe('2,3');
    expect(cvd(tasks.boxed_one_high)).toBe('3');
    expect(field(tasks.multinode_high, 'nodes')).toBe('slurm_cluster-node0,slurm_cluster-node1');
    expect([cvd(tasks.count_2x2_0), cvd(tasks.count_2x2_1)].sort()).toEqual(['0,1', '2,3']);
    expect(field(tasks.count_all, 'nodes')).toBe('slurm_cluster-node0,slurm_cluster-node1');
    expect(tasks.boxed_low).toMatch(/--container-image nvcr\.io\/nvidia\/cuda/);
    expect(tasks.bare_low).not.toMatch(/--container-image/);
  },
  'slurm/monitor_mixed': ({ out, tasks }) => {
    expect(tasks.cpu_report).toMatch(/backend: cpu_pool \(slurm\)/);
    expect(tasks.server_0).toMatch(/release_after: gpus=task_ready/);
    expect(tasks.server_1).toMatch(/release_after: gpus=task_ready/);
    expect(out).toContain('windowed/server__monitored_by__benchmark/');
  },
  'slurm/dynamo_trtllm_disagg': ({ out, tasks }) => {
    expect(Object.keys(tasks)).toEqual(
      expect.arrayContaining(['benchmark_16', 'benchmark_64', 'prefill_server_0']),
    );
    expect(tasks.decode_server_0).toMatch(
      /--ntasks 2 .*--mpi pmix [\s\S]*trtllm-llmapi-launch python3 -m dynamo\.trtllm/,
    );
    expect(field(tasks.benchmark_16, 'depends_on')).toContain('decode_server_0');
    expect(field(tasks.benchmark_64, 'depends_on')).toContain('benchmark_16'); // one after the other
    expect(out).toContain('windowed/decode_server__monitored_by__benchmark_16/');
  },
  'docker/gpu_monitor': ({ out, tasks }) => {
    expect(field(tasks.gpu_work, 'command')).toMatch(/--gpus '"device=0"' .*--entrypoint=/);
    expect(out).toContain('windowed/gpu_work/');
  },
  'docker/dynamo_vllm_agg': ({ tasks }) => {
    expect(field(tasks.vllm_worker, 'command')).toContain('--gpus');
    expect(field(tasks.etcd_server, 'command')).toContain('NVIDIA_VISIBLE_DEVICES=void');
  },
  'docker/dynamo_vllm_disagg': ({ out, tasks }) => {
    expect(field(tasks.prefill_worker, 'nodes')).toBe('node-0');
    expect(field(tasks.decode_worker, 'nodes')).toBe('node-1');
    expect(field(tasks.decode_worker, 'command')).toMatch(/^docker -H ssh:\/\/gpu-host-1\.example run /);
    expect(out).toContain('lifecycle/workflow/');
  },
  'docker/multi_node': ({ tasks }) => expect(field(tasks.both_hosts, 'nodes')).toBe('node-0,node-1'),
  'kubernetes/dynamo_trtllm_disagg': ({ tasks }) => {
    expect(tasks.prefill_worker).toMatch(/operator: prefill_mpi \(k8s_mpi\)/);
    expect(tasks.decode_worker).toMatch(/operator: decode_mpi \(k8s_mpi\)/);
    expect(field(tasks.decode_worker, 'nodes')).toBe('k8s-node1,k8s-node2');
    expect(tasks.frontend).toMatch(/operator: infra \(k8s\)/);
  },
};

const single = readdirSync(join(SAMPLES, 'self_contained'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

describe('every single-file sample dry-runs on its platform', () => {
  it.each(single)('%s', async (name) => {
    const plan = await dryRun([join(SAMPLES, 'self_contained', `${name}.yaml`)]);
    const platform = PLATFORM[name.split('/')[0]];
    for (const [task, block] of Object.entries(plan.tasks))
      expect(block, task).toMatch(new RegExp(`^ {6}backend: \\S+ \\(${platform}\\)`, 'm'));
    CHECKS[name]?.(plan);
  });

  it('the checks above name only samples that exist', () => {
    expect(Object.keys(CHECKS).filter((k) => !single.includes(k))).toEqual([]);
  });
});

const BACKENDS = readdirSync(join(MODULAR, 'backends')).map((f) => f.replace(/\.yaml$/, ''));
const WORKLOADS = readdirSync(join(MODULAR, 'workloads'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .filter((w) => w !== 'dynamo_common');
const MULTI_RANK = ['trtllm_serve', 'dynamo_trtllm', 'dynamo_trtllm_disagg'];
const SERVER_OPERATOR: Record<string, string> = {
  local: 'bash',
  slurm: 'srun',
  slurm_mpi: 'srun',
  docker: 'docker_run',
  docker_pool: 'docker_run',
  k8s: 'k8s',
  k8s_mpi: 'k8s_mpi',
};
/** the MPI flavours only for the multi-rank (TensorRT-LLM) workloads (README) */
const COMBOS = BACKENDS.flatMap((b) =>
  WORKLOADS.filter((w) => !b.endsWith('_mpi') || MULTI_RANK.includes(w)).map((w) => [b, w] as const),
);

describe('modular/backend_agnostic: every supported backend x workload dry-runs', () => {
  it('has the platforms and engines the issue names', () => {
    expect(BACKENDS.sort()).toEqual([
      'docker',
      'docker_pool',
      'k8s',
      'k8s_mpi',
      'local',
      'slurm',
      'slurm_mpi',
    ]);
    expect(WORKLOADS.sort()).toEqual([
      'dynamo_sglang', 'dynamo_sglang_disagg', 'dynamo_trtllm', 'dynamo_trtllm_disagg',
      'dynamo_vllm', 'dynamo_vllm_disagg', 'sglang_serve', 'trtllm_serve', 'vllm_serve',
    ]); // prettier-ignore
    expect(COMBOS.length).toBe(5 * 9 + 2 * 3);
  });

  it.each(COMBOS)('%s + %s', async (backend, workload) => {
    const { out, tasks } = await dryRun(modularFiles(backend, workload));
    expect(out, 'the fragments agree on what they share').not.toMatch(/⚠.*merge: /);
    const servers = workload.endsWith('_disagg') ? ['prefill_server', 'decode_server'] : ['server'];
    for (const s of servers) {
      expect(tasks[s], s).toMatch(new RegExp(`operator: server \\(${SERVER_OPERATOR[backend]}\\)`));
      expect(field(tasks.benchmark, 'depends_on'), 'required_by folded in').toContain(`'${s}'`);
    }
    if (workload.startsWith('dynamo_'))
      for (const s of servers) expect(field(tasks[s], 'depends_on')).toContain('frontend_server');
    if (MULTI_RANK.includes(workload)) {
      const command = tasks[servers[0]];
      if (backend === 'slurm_mpi') {
        expect(command).toMatch(/--ntasks 4 .*--mpi pmix/);
        expect(command).not.toContain('mpirun');
      } else expect(command).toContain('mpirun -np 4 --allow-run-as-root trtllm-llmapi-launch');
    }
    expect(tasks.benchmark).toContain('aiperf profile');
  });

  it('a server spanning nodes: 16 ranks over two 8-GPU nodes on the MPI flavours', async () => {
    for (const backend of ['slurm_mpi', 'k8s_mpi']) {
      const { tasks } = await dryRun(modularFiles(backend, 'trtllm_serve'), ['-s', 'SERVER_GPUS=16']);
      expect(field(tasks.server, 'nodes'), backend).toBe('cluster-node0,cluster-node1');
    }
  });

  it("docker_pool: the backend's gpus_per_node is each host's, so the second worker goes to the other host", async () => {
    const files = modularFiles('docker_pool', 'dynamo_vllm_disagg');
    const { out, tasks } = await dryRun(files, ['-s', 'GPUS_PER_NODE=1', '-s', 'SERVER_GPUS=1']);
    expect(field(tasks.prefill_server, 'nodes')).toBe('node-0');
    expect(field(tasks.decode_server, 'nodes')).toBe('node-1');
    expect(out).toMatch(/node node-1\n\s+│\s+GPU 0: decode_server/);
  });

  it('the catalogue lists the folder, and every sample of the catalogue is dry-run above', () => {
    const names = listSamples().map((s) => s.name);
    expect(names.filter((n) => n.startsWith('modular/'))).toEqual(['modular/backend_agnostic']);
    expect(names.filter((n) => n.startsWith('self_contained/')).sort()).toEqual(
      single.map((s) => `self_contained/${s}`),
    );
  });
});
