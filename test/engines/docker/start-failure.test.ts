/**
 * A container that is created but never reaches running is a failed start, fast, on the real
 * engines: the engine refuses a `--device` path that does not exist (backend extra_args) and a
 * GPU request on an engine without the NVIDIA runtime (the fixture has none: `--gpus` really
 * fails there, `could not select device driver "" with capabilities: [[gpu]]`), on one host and
 * on a pool host over ssh. The task ends FAILED with the engine's own message and a hint, the run
 * exits 1 within the test's bound (a hang ran into it before), and no container is left.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine, type Engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';
import { ledgerContainers } from './fixture.js';

const docker = engine('docker');
const ssh = engine('ssh');
/** a failed start is over in seconds; a run still going after this hung (today's bug) */
const RUN_BOUND_MS = 90_000;

function recipe(dir: string, name: string, gpus = 0): string {
  const f = join(dir, `${name}.yaml`);
  const res = gpus ? `      resources:\n        gpus:\n          count: ${gpus}\n` : '';
  writeFileSync(
    f,
    `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n    - name: t\n${res}      script: ["echo never"]\n`,
  );
  return f;
}

function backend(dir: string, name: string, lines: string[]): string {
  const f = join(dir, `${name}-backend.yaml`);
  writeFileSync(
    f,
    [
      'version: "0.1"',
      'backends:',
      '  - name: box',
      '    type: docker',
      '    default: true',
      `    image: ${HOSTBIN_IMAGE}`,
      `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
      ...lines.map((l) => `    ${l}`),
      '',
    ].join('\n'),
  );
  return f;
}

const runDirOf = (dir: string, name: string): string => {
  const d = readdirSync(join(dir, 'sflow_output')).find((x) => x.startsWith(`${name}-`));
  if (!d) throw new Error(`no run folder for ${name}`);
  return join(dir, 'sflow_output', d);
};

/** containers named in a run's ledger that still exist on `hosts` */
async function leftOf(eng: Engine, runDir: string, hosts: string[]): Promise<string[]> {
  const ids = ledgerContainers(runDir);
  const names = ids.map((id) => id.split('@')[0]);
  const all: string[] = [];
  for (const h of hosts) {
    const r = await eng.exec('docker', ['-H', h, 'ps', '-a', '--format', '{{.Names}}']);
    all.push(...String(r.stdout).split('\n'));
  }
  return names.filter((n) => all.includes(n));
}

async function removeAll(eng: Engine, dir: string, hosts: string[]): Promise<void> {
  let dirs: string[];
  try {
    dirs = readdirSync(join(dir, 'sflow_output')).map((d) => join(dir, 'sflow_output', d));
  } catch {
    return;
  }
  for (const d of dirs) {
    const left = await leftOf(eng, d, hosts).catch(() => []);
    for (const h of hosts) if (left.length) await eng.exec('docker', ['-H', h, 'rm', '-f', ...left]);
  }
}

describeWithEngines('Docker: a container that cannot start fails its task at once', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  const env = (extra: NodeJS.ProcessEnv = {}) => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never', ...extra });

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-start-');
  });
  afterAll(async () => {
    await removeAll(docker, dir, [host()]);
    await removeHostbinImage(docker, [host()]);
  });

  it('a --device that does not exist (backend extra_args): FAILED with the engine message and a hint', async () => {
    const f = recipe(dir, 'dkdev');
    const b = backend(dir, 'dkdev', ["extra_args: ['--device=/dev/sflow-no-such-device']"]);
    const r = await sflowAsync(['run', '-f', f, '-f', b], { cwd: dir, env: env(), timeoutMs: RUN_BOUND_MS });
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(1);
    expect(out).toMatch(/could not start: error gathering device information/);
    expect(out).toMatch(/\/dev\/sflow-no-such-device/);
    expect(out).toMatch(/a --device path does not exist on that host/);
    const run = runDirOf(dir, 'dkdev');
    expect(readFileSync(join(run, 'sflow_summary.log'), 'utf8')).toMatch(/FAILED/);
    const fin = readFileSync(join(run, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; task?: string; status?: string; reason?: string })
      .find((e) => e.type === 'task_finished' && e.task === 't');
    expect(fin?.status).toBe('FAILED');
    expect(fin?.reason).toMatch(/no such file or directory/);
    expect(await leftOf(docker, run, [host()])).toEqual([]);
  });

  it('a GPU task on an engine without the NVIDIA runtime: FAILED naming the NVIDIA container toolkit', async () => {
    const f = recipe(dir, 'dkgpu', 1);
    const b = backend(dir, 'dkgpu', ['gpus_per_node: 2']);
    const r = await sflowAsync(['run', '-f', f, '-f', b], {
      cwd: dir,
      // the fake nvidia-smi plays the host's cards; the engine itself has no GPU runtime
      env: env({
        PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH ?? ''}`,
        SFLOW_GPU_RESERVATION_DIR: join(dir, 'registry'),
      }),
      timeoutMs: RUN_BOUND_MS,
    });
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(1);
    expect(out).toMatch(/could not select device driver "" with capabilities: \[\[gpu\]\]/);
    expect(out).toMatch(/NVIDIA Container Toolkit/);
    expect(await leftOf(docker, runDirOf(dir, 'dkgpu'), [host()])).toEqual([]);
  });
});

describeWithEngines('Docker pool: a container that cannot start on a pool host', [docker, ssh], () => {
  const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];
  let dir: string;

  beforeAll(async () => {
    await buildHostbinImage(docker, engines());
    dir = scratchDir('sflow-docker-pool-start-');
  });
  afterAll(async () => {
    await removeAll(docker, dir, engines());
    await removeHostbinImage(docker, engines());
  });

  it('a bad --device from the recipe (--extra-docker-args) on a two-host task: FAILED with the message', async () => {
    const f = join(dir, 'pooldev.yaml');
    writeFileSync(
      f,
      'version: "0.1"\nworkflow:\n  name: pooldev\n  tasks:\n    - name: t\n      resources:\n        nodes:\n          count: 2\n      script: ["echo never"]\n',
    );
    const b = backend(dir, 'pooldev', [
      'hosts:',
      `  - {name: a, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}, rendezvous_address: 127.0.0.1}`,
      `  - {name: b, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}, rendezvous_address: 127.0.0.2}`,
    ]);
    const env: NodeJS.ProcessEnv = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH ?? ''}`,
      SFLOW_TASK_OUTPUT: 'never',
    };
    delete env.DOCKER_HOST;
    const r = await sflowAsync(
      ['run', '-f', f, '-f', b, '--extra-docker-args=--device=/dev/sflow-no-such-device'],
      { cwd: dir, env, timeoutMs: RUN_BOUND_MS },
    );
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(1);
    expect(out).toMatch(/could not start: error gathering device information/);
    expect(out).toMatch(/on ssh:\/\//);
    expect(await leftOf(docker, runDirOf(dir, 'pooldev'), engines())).toEqual([]);
  });
});
