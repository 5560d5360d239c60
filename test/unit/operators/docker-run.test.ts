/** The `docker run` command lines of the docker_run operator (backends.md §3.5–3.6, §6.4, §7.4–7.5). */
import { describe, expect, it } from 'vitest';
import { TERM_TRAP_LINE } from '../../../src/operators/graceful-stop.js';
import { launchSpecs, OPERATORS, type OperatorInput } from '../../../src/operators/index.js';
import {
  containerName,
  dockerRunCommand,
  endpointArgs,
  gpuDevicesArg,
} from '../../../src/operators/docker-run.js';

const base = (over: Partial<OperatorInput> = {}): OperatorInput => ({
  task: 'server',
  type: 'docker_run',
  config: { image: 'img:1', extra_args: ['--entrypoint=', '--network=host'] },
  script: 'echo hi',
  nodes: [{ name: 'localhost', ip: '127.0.0.1', index: 0 }],
  gpus: null,
  env: { SFLOW_WORKFLOW_OUTPUT_DIR: '/r/run', SFLOW_TASK_NODE_INDEX: '0', SECRET: 's3cr3t' },
  allocationId: '0',
  backendConfig: {},
  ...over,
});

const specs = (over: Partial<OperatorInput> = {}) => launchSpecs(OPERATORS.docker_run, base(over));

describe('docker_run operator', () => {
  it('GPU task: the device list reaches docker with its literal double quotes', () => {
    const [s] = specs({ gpus: [2, 3], env: { ...base().env, CUDA_VISIBLE_DEVICES: '2,3' } });
    const i = s.argv.indexOf('--gpus');
    expect(s.argv[i + 1]).toBe('"device=2,3"');
    expect(gpuDevicesArg(['GPU-aaa', 'GPU-bbb'])).toBe('"device=GPU-aaa,GPU-bbb"');
    expect(s.argv).not.toContain('NVIDIA_VISIBLE_DEVICES=void');
    expect(s.argv.slice(0, 8)).toEqual([
      'docker',
      'run',
      '--init',
      '-e',
      'TINI_KILL_PROCESS_GROUP=1',
      '--sig-proxy=false',
      '--name',
      containerName(process.pid, 'server', 'localhost'),
    ]);
    expect(s.argv[7]).toBe(`sflow-p${process.pid}-server-localhost`);
  });

  it('CPU-only task: NVIDIA_VISIBLE_DEVICES=void; values of other variables never in argv', () => {
    const [s] = specs();
    expect(s.argv).toContain('NVIDIA_VISIBLE_DEVICES=void');
    expect(s.env.NVIDIA_VISIBLE_DEVICES).toBe('void');
    expect(s.argv).toContain('SECRET');
    expect(s.argv.join(' ')).not.toContain('s3cr3t');
    // the run directory at its own path, then the image and `bash -lc <script>` after the extra args
    expect(s.argv).toContain('/r/run:/r/run');
    const script = `${TERM_TRAP_LINE}\necho hi`;
    expect(s.argv.slice(-6)).toEqual(['--entrypoint=', '--network=host', 'img:1', 'bash', '-lc', script]);
    expect(s.container?.command).toEqual(['bash', '-lc', script]);
  });

  it('CPU-only task whose extra_args grant GPUs gets no void', () => {
    const [s] = specs({ config: { image: 'i', extra_args: ['--gpus=all'] } });
    expect(s.argv.some((a) => a.startsWith('NVIDIA_VISIBLE_DEVICES'))).toBe(false);
  });

  it('pool: one container per host, its endpoint, host mounts and extra args; no run-dir mount', () => {
    const backendConfig = {
      image: 'pool:1',
      mounts: ['/data:/data'],
      hosts: [
        { name: 'node-0', address: '10.0.0.11' },
        {
          name: 'node-1',
          address: '10.0.0.12',
          user: 'ops',
          mounts: ['/m1:/m1:ro'],
          extra_args: ['--shm-size=1g'],
        },
      ],
    };
    const nodes = [
      { name: 'node-0', ip: '10.0.0.11', index: 0 },
      { name: 'node-1', ip: '10.0.0.12', index: 1 },
    ];
    const [a, b] = specs({ backendConfig, nodes, config: {} });
    expect(a.argv.slice(0, 3)).toEqual(['docker', '-H', 'ssh://10.0.0.11']);
    expect(b.argv.slice(0, 3)).toEqual(['docker', '-H', 'ssh://ops@10.0.0.12']);
    expect(a.container?.name).toMatch(/-server-node-0$/);
    expect(b.container?.name).toMatch(/-server-node-1$/);
    expect([a.env.SFLOW_TASK_NODE_INDEX, b.env.SFLOW_TASK_NODE_INDEX]).toEqual(['0', '1']);
    expect(a.mounts).toEqual(['/data:/data']);
    expect(b.mounts).toEqual(['/data:/data', '/m1:/m1:ro']);
    expect(b.argv).toContain('--shm-size=1g');
    expect(a.argv).not.toContain('--shm-size=1g');
    expect(b.argv).toContain('pool:1');
  });

  it('a pool host given as a docker context (0.3.1) is reached with --context, never -H', () => {
    const backendConfig = {
      image: 'pool:1',
      hosts: [
        { name: 'n0', context: 'gpu-box', ip_address: '10.0.0.11' },
        { name: 'n1', docker_host: 'ssh://ops@10.0.0.12' },
      ],
    };
    const nodes = [
      { name: 'n0', ip: '10.0.0.11', index: 0 },
      { name: 'n1', ip: '10.0.0.12', index: 1 },
    ];
    const [a, b] = specs({ backendConfig, nodes, config: {} });
    expect(a.argv.slice(0, 4)).toEqual(['docker', '--context', 'gpu-box', 'run']);
    expect(a.container?.host).toBe('context:gpu-box');
    expect(b.argv.slice(0, 4)).toEqual(['docker', '-H', 'ssh://ops@10.0.0.12', 'run']);
    expect(endpointArgs(undefined)).toEqual([]);
  });

  it('log offload: the container appends to the task log itself where it sees the run directory', () => {
    const logPath = '/r/run/server/server.log';
    const [s] = specs({ logPath, backendConfig: { offload_task_logs: true } });
    expect(s.container?.logFile).toBe(logPath);
    expect(s.argv.slice(-3)).toEqual(['bash', '-lc', `${TERM_TRAP_LINE}\nexec >>'${logPath}' 2>&1\necho hi`]);
    // the operator's log_to_file wins over the backend's offload_task_logs, both ways
    expect(specs({ logPath, config: { image: 'i', log_to_file: true } })[0].container?.logFile).toBe(logPath);
    const off = specs({
      logPath,
      config: { image: 'i', log_to_file: false },
      backendConfig: { offload_task_logs: true },
    });
    expect(off[0].container?.logFile).toBeUndefined();
    expect(off[0].argv.at(-1)).toBe(`${TERM_TRAP_LINE}\necho hi`);
    // where the container cannot see the log: a pool host, a multi-node task, no run-dir mount
    const blocked = [
      specs({
        logPath,
        backendConfig: { offload_task_logs: true, hosts: [{ name: 'localhost', address: 'h' }] },
      }),
      specs({
        logPath,
        backendConfig: { offload_task_logs: true },
        nodes: [
          { name: 'a', ip: '10.0.0.1', index: 0 },
          { name: 'b', ip: '10.0.0.2', index: 1 },
        ],
      }),
      specs({ logPath, config: { image: 'i', log_to_file: true, auto_mount_runtime_dirs: false } }),
    ];
    for (const b of blocked)
      expect(
        b.every((x) => x.container?.logFile === undefined && x.argv.at(-1) === `${TERM_TRAP_LINE}\necho hi`),
      ).toBe(true);
  });

  it('the backend builds the same command, with another program and the registry UUIDs', () => {
    const [s] = specs({ gpus: [0] });
    expect(dockerRunCommand(s)).toEqual(s.argv);
    const got = dockerRunCommand(s, { program: 'podman', gpus: gpuDevicesArg(['GPU-x']) });
    expect(got[0]).toBe('podman');
    expect(got[got.indexOf('--gpus') + 1]).toBe('"device=GPU-x"');
  });

  it('pass_envs: false forwards nothing but the GPU guard', () => {
    const [s] = specs({ config: { image: 'i', pass_envs: false } });
    // every -e but docker-init's own setting (TINI_KILL_PROCESS_GROUP: how it passes on a stop)
    const forwarded = s.argv.flatMap((a, i) => (a === '-e' ? [s.argv[i + 1]] : []));
    expect(forwarded).toEqual(['TINI_KILL_PROCESS_GROUP=1', 'NVIDIA_VISIBLE_DEVICES=void']);
  });
  it('on a backend that does not remove containers itself (local) the container removes itself: --rm', () => {
    expect(specs({ removeContainers: true })[0].argv.slice(0, 3)).toEqual(['docker', 'run', '--rm']);
    expect(specs({ removeContainers: false })[0].argv).not.toContain('--rm');
    expect(specs()[0].argv).not.toContain('--rm');
  });
});
