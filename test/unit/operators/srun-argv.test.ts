/**
 * The Slurm command lines of backends.md §7 (worked examples): salloc with extra_args verbatim
 * and in order (§7.1), the default srun step (§7.2), a named container operator with an inline
 * override, automatic mounts and the GPU prelude (§7.3), plus the §6.3 field → flag rules the
 * examples do not show (gpus_per_task opts out of the prelude, container flags only with a
 * container, --container-mounts from extra_args merged into one).
 */
import { describe, expect, it } from 'vitest';
import { sallocArgv } from '../../../src/backends/slurm/allocate.js';
import { srunArgv } from '../../../src/operators/srun.js';
import { TERM_TRAP_LINE } from '../../../src/operators/graceful-stop.js';
import { stepStampLine } from '../../../src/operators/srun-step.js';
import type { OperatorInput } from '../../../src/operators/types.js';

const R = '/home/me/proj/sflow_output/demo-20260801-120000-a1b2c3';
const NODES = [
  { name: 'gpu-a01', ip: '10.0.0.1', index: 0 },
  { name: 'gpu-a02', ip: '10.0.0.2', index: 1 },
];

function input(over: Partial<OperatorInput<'srun'>>): OperatorInput<'srun'> {
  return {
    task: 'hello',
    type: 'srun',
    config: {},
    script: 'echo hello',
    nodes: NODES,
    gpus: null,
    env: {
      SFLOW_WORKSPACE_DIR: '/home/me/proj',
      SFLOW_OUTPUT_DIR: '/home/me/proj/sflow_output',
      SFLOW_WORKFLOW_OUTPUT_DIR: R,
      SFLOW_TASK_OUTPUT_DIR: `${R}/hello`,
    },
    allocationId: '424242',
    backendConfig: {},
    ...over,
  };
}

/** the value after a flag */
const after = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];

describe('Slurm command lines (backends.md §7)', () => {
  it('§7.1 salloc: extra_args verbatim, in order, repeated values kept', () => {
    const argv = sallocArgv(
      {
        account: 'acct',
        partition: 'batch',
        time: '01:00:00',
        nodes: 2,
        gpus_per_node: 8,
        extra_args: ['--exclusive', '-G', '1', '-N', '1'],
      },
      'demo',
    );
    expect(argv.join(' ')).toBe(
      'salloc --account acct --partition batch --nodes 2 --time 01:00:00 --job-name demo --no-shell --exclusive -G 1 -N 1',
    );
  });

  it('salloc: include_nodes / exclude_nodes become --nodelist / --exclude, before extra_args', () => {
    const argv = sallocArgv(
      {
        account: 'a',
        partition: 'p',
        time: 5,
        nodes: 2,
        include_nodes: ['gpu-a01', 'gpu-b[1-2]'],
        exclude_nodes: ['gpu-c07'],
        extra_args: ['--exclusive'],
      },
      'demo',
    );
    expect(argv.join(' ')).toBe(
      'salloc --account a --partition p --nodes 2 --time 5 --job-name demo --nodelist gpu-a01,gpu-b[1-2] --exclude gpu-c07 --no-shell --exclusive',
    );
    expect(sallocArgv({ nodes: 1, include_nodes: [], exclude_nodes: [] }, 'w')).not.toContain('--nodelist');
  });

  it('§7.2 srun, default operator, no container: the whole allocation, no --container-* flags', () => {
    const argv = srunArgv(input({}));
    expect(argv.slice(0, -1).join(' ')).toBe(
      'srun --jobid 424242 --nodes 2 --nodelist gpu-a01,gpu-a02 --job-name hello --unbuffered --export ALL --label --overlap bash -c',
    );
    // the step stamps its start and end in the task folder; a 2-node step learns its node index and name from Slurm
    expect(argv.at(-1)).toBe(
      `${stepStampLine(`${R}/hello`)}\n${TERM_TRAP_LINE}\nexport SFLOW_TASK_NODE_INDEX="\${SLURM_NODEID:-0}" SFLOW_TASK_NODE_NAME="\${SLURMD_NODENAME:-$SFLOW_TASK_NODE_NAME}"\necho hello`,
    );
  });

  it('§7.3 named container operator + inline override + GPUs: flags, merged mounts, extra_args last, prelude', () => {
    const argv = srunArgv(
      input({
        task: 'train',
        nodes: [NODES[1]],
        gpus: [0, 1, 2, 3],
        script: 'torchrun --nproc-per-node 4 train.py',
        config: {
          mpi: 'pmix',
          container_image: 'nvcr.io/nvidia/pytorch:24.05-py3',
          ntasks_per_node: 1,
          ntasks: 1,
          extra_args: ['--mem-per-gpu=80G', '--exclusive'],
        },
        env: { ...input({}).env, SFLOW_TASK_OUTPUT_DIR: `${R}/train` },
        artifactPaths: ['/lustre/models/llama/'],
      }),
    );
    expect(argv[0]).toBe('srun');
    expect(after(argv, '--jobid')).toBe('424242');
    expect(after(argv, '--nodes')).toBe('1');
    expect(after(argv, '--nodelist')).toBe('gpu-a02');
    expect(after(argv, '--ntasks')).toBe('1');
    expect(after(argv, '--ntasks-per-node')).toBe('1');
    expect(after(argv, '--job-name')).toBe('train');
    expect(after(argv, '--mpi')).toBe('pmix');
    expect(after(argv, '--container-image')).toBe('nvcr.io/nvidia/pytorch:24.05-py3');
    expect(argv).toContain('--no-container-mount-home');
    expect(argv).toContain('--container-writable');
    expect(after(argv, '--container-mounts').split(',')).toEqual([
      '/lustre/models/llama/:/lustre/models/llama/:rw',
      '/home/me/proj:/home/me/proj:rw',
      '/home/me/proj/sflow_output:/home/me/proj/sflow_output:rw',
      `${R}:${R}:rw`,
      `${R}/train:${R}/train:rw`,
    ]);
    // named flags, then extra_args in order, then the payload
    const bash = argv.indexOf('bash');
    expect(argv.slice(bash - 2, bash + 2)).toEqual(['--mem-per-gpu=80G', '--exclusive', 'bash', '-c']);
    expect(argv.indexOf('--mpi')).toBeLessThan(bash - 2);
    expect(argv.at(-1)).toBe(
      `${stepStampLine(`${R}/train`)}\n${TERM_TRAP_LINE}\n. ${R}/sflow_gpu_select.sh || exit 97\ntorchrun --nproc-per-node 4 train.py`,
    );
  });

  it('cpus_per_task becomes --cpus-per-task with its value, after the node flags', () => {
    const argv = srunArgv(input({ nodes: [NODES[0]], config: { cpus_per_task: 6 } }));
    expect(after(argv, '--cpus-per-task')).toBe('6');
    expect(argv.filter((a) => a === '--cpus-per-task')).toHaveLength(1);
    expect(argv.indexOf('--cpus-per-task')).toBeGreaterThan(argv.indexOf('--nodelist'));
    expect(argv.indexOf('--cpus-per-task')).toBeLessThan(argv.indexOf('bash'));
    // unset: no flag
    expect(srunArgv(input({ nodes: [NODES[0]] }))).not.toContain('--cpus-per-task');
  });

  it('gpus_per_task opts out of the in-step GPU selection; no container flags without a container', () => {
    const argv = srunArgv(input({ nodes: [NODES[0]], gpus: [0, 1], config: { gpus_per_task: '1' } }));
    expect(after(argv, '--gpus-per-task')).toBe('1');
    expect(argv.at(-1)).toBe(`${stepStampLine(`${R}/hello`)}\n${TERM_TRAP_LINE}\necho hello`);
    expect(argv.join(' ')).not.toContain('--container');
  });

  it('--container-mounts in extra_args joins the one --container-mounts flag', () => {
    const argv = srunArgv(
      input({
        nodes: [NODES[0]],
        config: {
          container_name: 'c',
          container_mounts: ['/a:/a'],
          extra_args: ['--container-mounts=/b:/b', '-v'],
        },
      }),
    );
    expect(argv.filter((a) => a === '--container-mounts')).toHaveLength(1);
    expect(after(argv, '--container-mounts').split(',').slice(0, 2)).toEqual(['/a:/a', '/b:/b']);
    expect(argv.slice(argv.indexOf('bash') - 1, argv.indexOf('bash'))).toEqual(['-v']);
  });
});
