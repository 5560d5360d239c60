/**
 * The Docker samples end to end on the test engines, with the stand-ins in the image the tests
 * build (standin-image.ts: busybox + test/fixtures/standins) set as the samples' images with -s:
 * on one engine hello world, the GPU monitor's marker window, Dynamo + vLLM aggregated, and the
 * modular recipe on backends/docker.yaml (SGLang; Dynamo + vLLM); over the SSH pool (engines a
 * and b) the two-host rendezvous, Dynamo + vLLM disaggregated with prefill and decode on different
 * hosts and the pool monitored, and the modular recipe on backends/docker_pool.yaml (Dynamo +
 * SGLang disaggregated). GPU tasks: the fake nvidia-smi plays the cards and a recording CLI
 * drops `--gpus` (no NVIDIA runtime here; the request is checked from the recorded argv).
 * Readiness gates each client, results are parsed and checked, and no container or process of a
 * run is left on any engine.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sflowAsync } from '../../helpers/cli-async.js';
import { onlyRunDir, taskLog, taskTable } from '../../helpers/run-dir.js';
import { scratchDir } from '../../helpers/scratch.js';
import {
  FAKE_SMI_BIN,
  QUICK_BENCH,
  modularFiles,
  modularPortNames,
  portArgs,
  processesOf,
  resultValues,
  sample,
  sets,
  modularServers,
  notReadyBefore,
} from '../../helpers/standins.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import {
  buildHostbinImage,
  gpuDroppingCli,
  HOST_MOUNTS,
  HOSTBIN_IMAGE,
  removeHostbinImage,
} from './fixture.js';
import { buildStandinImage, removeStandinImage, STANDIN_IMAGE } from './standin-image.js';
import { ledgerContainers } from './fixture.js';

const docker = engine('docker');
const ssh = engine('ssh');
const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];

/** containers a run's ledger names that still exist on any of the engines */
async function containersLeft(runDir: string): Promise<string[]> {
  const names = ledgerContainers(runDir);
  expect(names.length).toBeGreaterThan(0);
  const left: string[] = [];
  for (const host of engines()) {
    const r = await docker.exec('docker', ['-H', host, 'ps', '-a', '--format', '{{.Names}}']);
    left.push(
      ...String(r.stdout)
        .split('\n')
        .filter((n) => names.includes(n)),
    );
  }
  return left;
}

function harness(name: string) {
  let dir = '';
  let n = 0;
  const ctx = {
    dir: () => dir,
    env: {} as NodeJS.ProcessEnv,
    argvLog: '',
    setup() {
      dir = scratchDir(`sflow-docker-samples-${name}-`);
      mkdirSync(join(dir, 'models'));
      ctx.argvLog = join(dir, 'docker-argv.log');
      writeFileSync(ctx.argvLog, '');
      return gpuDroppingCli(dir, ctx.argvLog);
    },
    /** runs a sample; checks success and that nothing of the run is left */
    async run(files: string[], extra: string[]) {
      const cwd = join(dir, `run${n++}`);
      mkdirSync(cwd);
      const r = await sflowAsync(['run', ...files.flatMap((f) => ['-f', f]), ...extra], {
        cwd,
        env: ctx.env,
        timeoutMs: 240_000,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const runDir = onlyRunDir(join(cwd, 'sflow_output'));
      expect(await containersLeft(runDir)).toEqual([]);
      expect(await processesOf(runDir)).toEqual([]);
      return runDir;
    },
    /** the recorded `docker run` argv of a task's container */
    runArgv(task: string): string[] {
      const named = new RegExp(`^sflow-p\\d+-${task}-`);
      return (
        readFileSync(ctx.argvLog, 'utf8')
          .split('\n')
          .map((l) => l.split('\t'))
          .find((a) => a.includes('run') && a.some((x) => named.test(x))) ?? []
      );
    },
  };
  return ctx;
}

const IMAGES = sets({ SERVER_IMAGE: STANDIN_IMAGE, CLIENT_IMAGE: STANDIN_IMAGE });

describeWithEngines('the Docker samples on one engine, with the stand-ins in the image', [docker], () => {
  const h = harness('one');
  beforeAll(async () => {
    await buildStandinImage(docker, [docker.get('DOCKER_HOST')]);
    const cli = h.setup();
    h.env = docker.childEnv({
      PATH: `${FAKE_SMI_BIN}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_GPUS: '2',
      SFLOW_DOCKER_CLI: cli,
      SFLOW_GPU_RESERVATION_DIR: join(h.dir(), 'registry'),
      SFLOW_TASK_OUTPUT: 'never',
    });
  });
  afterAll(() => removeStandinImage(docker, [docker.get('DOCKER_HOST')]));
  const models = () => ['-s', `MODEL_HOST_PATH=${join(h.dir(), 'models')}`];

  it('hello_world: two tasks, each a container of the image', async () => {
    const d = await h.run([sample('docker/hello_world')], ['-s', `IMAGE=${STANDIN_IMAGE}`]);
    expect(taskLog(d, 'hello')).toMatch(/^hello from container \S+$/m);
    expect(taskLog(d, 'uname')).toMatch(/^Linux /m);
  });

  it('gpu_monitor: the GPU task gets a claimed card; the burst is reported inside its markers', async () => {
    const d = await h.run(
      [sample('docker/gpu_monitor')],
      sets({ NBODY_IMAGE: STANDIN_IMAGE, NBODY: 'nbody', IDLE_SECONDS: 1, NBODY_ITERATIONS: 40 }),
    );
    expect(resultValues(d, 'gpu_work').interactions_per_second).toBeGreaterThan(0);
    expect(h.runArgv('gpu_work')).toEqual(
      expect.arrayContaining([
        '--gpus',
        '"device=GPU-0000a1b2-0000-4000-8000-000000000011"',
        '--entrypoint=',
      ]),
    );
    const win = JSON.parse(
      readFileSync(join(d, 'sflow_monitor', 'windowed', 'gpu_work', 'window.json'), 'utf8'),
    );
    expect(win.status).toBe('resolved');
    expect(readFileSync(join(d, 'sflow_monitor', 'lifecycle', 'workflow', 'timeline.csv'), 'utf8')).toMatch(
      /gpu/,
    );
  });

  it('dynamo_vllm_agg: NATS, etcd, frontend and a GPU worker in containers, AIPerf once the frontend answers', async () => {
    const d = await h.run(
      [sample('docker/dynamo_vllm_agg')],
      [
        ...sets({ DYNAMO_IMAGE: STANDIN_IMAGE, CLIENT_IMAGE: STANDIN_IMAGE, GPUS_PER_NODE: 2 }),
        ...sets({ CONCURRENCY: 2, REQUESTS: 4, OSL: 8 }),
        ...models(),
        ...(await portArgs('HTTP_PORT', 'ETCD_PORT', 'NATS_PORT', 'WORKER_SYSTEM_PORT')),
      ],
    );
    expect(taskTable(d).vllm_worker.status).toBe('READY');
    expect(notReadyBefore(d, 'benchmark', ['vllm_worker', 'frontend'])).toEqual([]);
    expect(resultValues(d, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
    expect(h.runArgv('vllm_worker')).toContain('--gpus');
    expect(h.runArgv('frontend')).not.toContain('--gpus');
  });

  it('modular on backends/docker.yaml: SGLang, then Dynamo + vLLM', async () => {
    for (const workload of ['sglang_serve', 'dynamo_vllm']) {
      const d = await h.run(modularFiles('docker', workload), [
        ...IMAGES, ...QUICK_BENCH, ...sets({ GPUS_PER_NODE: 2, SERVER_GPUS: 1 }), ...models(),
        ...(await portArgs(...modularPortNames(workload))),
      ]); // prettier-ignore
      expect(resultValues(d, 'benchmark'), workload).toMatchObject({ request_count: 4, errors: 0 });
      expect(notReadyBefore(d, 'benchmark', modularServers(workload))).toEqual([]);
    }
  });
});

// the pool runs wait mostly on ssh round trips: they run side by side (own ports, no GPU registry)
describeWithEngines('the Docker pool samples over SSH (hosts a and b)', [docker, ssh], () => {
  const h = harness('pool');
  const HOSTS = () =>
    sets({
      HOST_0: ssh.get('SFLOW_TEST_SSH_ALIAS_A'),
      HOST_1: ssh.get('SFLOW_TEST_SSH_ALIAS_B'),
      HOST_0_IP: ssh.get('SFLOW_TEST_SSH_HOST_A'),
      HOST_1_IP: ssh.get('SFLOW_TEST_SSH_HOST_B'),
    });
  beforeAll(async () => {
    await buildStandinImage(docker, engines());
    await buildHostbinImage(docker, engines());
    const cli = h.setup();
    h.env = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${FAKE_SMI_BIN}:${process.env.PATH ?? ''}`,
      SFLOW_DOCKER_CLI: cli,
      SFLOW_TASK_OUTPUT: 'never',
    };
    delete h.env.DOCKER_HOST; // every container goes to a pool host
  });
  afterAll(async () => {
    await removeStandinImage(docker, engines());
    await removeHostbinImage(docker, engines());
  });

  it.concurrent('multi_node: one container per host, rank 1 reaches the leader on host a', async () => {
    // the sample's image needs python3: the hostbin image with this machine's /usr mounted
    const d = await h.run(
      [sample('docker/multi_node')],
      [
        ...HOSTS(), '-s', `IMAGE=${HOSTBIN_IMAGE}`, ...(await portArgs('RENDEZVOUS_PORT')),
        ...HOST_MOUNTS.map((m) => `--extra-docker-args=-v=${m}`),
      ],
    ); // prettier-ignore
    expect(taskLog(d, 'leader_echo')).toMatch(/leader got: hello from rank 1 from 127\.0\.0\.\d/);
    expect(taskLog(d, 'both_hosts')).toMatch(/rank 1\/2 on \S+, leader 127\.0\.0\.1/);
  });

  it.concurrent(
    'dynamo_vllm_disagg: prefill on host a, decode on host b pulling its KV cache; both hosts monitored',
    async () => {
      const d = await h.run(
        [sample('docker/dynamo_vllm_disagg')],
        [
          ...HOSTS(),
          ...sets({
            DYNAMO_IMAGE: STANDIN_IMAGE,
            CLIENT_IMAGE: STANDIN_IMAGE,
            GPUS_PER_NODE: 1,
            WORKER_GPUS: 1,
          }),
          ...sets({ CONCURRENCY: 2, REQUESTS: 4, OSL: 8 }),
          ...(await portArgs(
            'HTTP_PORT',
            'ETCD_PORT',
            'NATS_PORT',
            'PREFILL_SYSTEM_PORT',
            'DECODE_SYSTEM_PORT',
          )),
        ],
      );
      expect(resultValues(d, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
      expect(notReadyBefore(d, 'benchmark', ['prefill_worker', 'decode_worker'])).toEqual([]);
      // the decode worker registered with host b's address
      expect(taskLog(d, 'decode_worker')).toMatch(/system status server on http:\/\/127\.0\.0\.2:\d+/);
      expect(h.runArgv('decode_worker')).toContain(`ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}`);
      const raw = readFileSync(join(d, 'sflow_monitor.log'), 'utf8');
      expect(raw).not.toMatch(/not sampled|did not start/);
      expect(
        readFileSync(join(d, 'sflow_monitor', 'lifecycle', 'workflow', 'summary.csv'), 'utf8').length,
      ).toBeGreaterThan(0);
    },
  );

  it.concurrent(
    'modular on backends/docker_pool.yaml: Dynamo + SGLang disaggregated, one worker per host',
    async () => {
      const w = 'dynamo_sglang_disagg';
      const d = await h.run(modularFiles('docker_pool', w), [
      ...HOSTS(), ...IMAGES, ...QUICK_BENCH, ...sets({ GPUS_PER_NODE: 1, SERVER_GPUS: 1 }),
      '-s', `MODEL_HOST_PATH=${join(h.dir(), 'models')}`, ...(await portArgs(...modularPortNames(w))),
    ]); // prettier-ignore
      expect(resultValues(d, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
      expect(notReadyBefore(d, 'benchmark', modularServers(w))).toEqual([]);
      // one on each host (which one where is the planner's choice)
      const hostOf = (t: string) =>
        /system status server on http:\/\/(127\.0\.0\.\d):/.exec(taskLog(d, t))?.[1];
      expect([hostOf('prefill_server'), hostOf('decode_server')].sort()).toEqual(['127.0.0.1', '127.0.0.2']);
    },
  );
});
