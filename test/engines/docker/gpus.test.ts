/**
 * GPUs on one Docker host. No GPU and no NVIDIA runtime here: the fake nvidia-smi
 * (assets/test-bin) plays four cards, and `SFLOW_DOCKER_CLI` points at a recording wrapper that
 * writes each `docker` argv to a file and drops `--gpus` before handing the rest to the real CLI
 * (the engine would refuse it), so the containers still run. Checked from the arguments: two
 * concurrent runs get disjoint cards by UUID, quoted as docker needs; a third run fails fast while
 * they hold every card, and one with --wait-for-gpus waits and then runs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, gpuDroppingCli, removeHostbinImage } from './fixture.js';
import { dockerFragment, dockerRuns } from './runs.js';

const docker = engine('docker');

describeWithEngines('Docker backend GPUs (fake nvidia-smi, recorded docker argv)', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  let argvLog: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-gpus-');
    argvLog = join(dir, 'docker-argv.log');
    const wrapper = gpuDroppingCli(dir, argvLog);
    env = docker.childEnv({
      PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH ?? ''}`,
      SFLOW_DOCKER_CLI: wrapper,
      SFLOW_GPU_RESERVATION_DIR: join(dir, 'registry'),
      SFLOW_TASK_OUTPUT: 'never',
    });
    writeFileSync(join(dir, 'docker.yaml'), dockerFragment('box', ['gpus_per_node: 4']));
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  /** workflow `<name>`, one task `<name>` asking for `gpus` cards */
  const recipe = (name: string, gpus: number, secs: number) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n    - name: ${name}\n      resources:\n        gpus:\n          count: ${gpus}\n      script: ["echo cvd=$CUDA_VISIBLE_DEVICES nvd=\${NVIDIA_VISIBLE_DEVICES:-unset}; sleep ${secs}"]\n`,
    );
    return f;
  };
  const runs = dockerRuns(
    docker,
    () => dir,
    () => env,
  );
  const run = (name: string, gpus: number, secs: number, extra: string[] = []) =>
    runs.sflow(['run', '-f', recipe(name, gpus, secs), '-f', join(dir, 'docker.yaml'), ...extra], 150_000);
  /** the `--gpus` value the `docker run` of task `name` got */
  const granted = (name: string): string | undefined => {
    let text: string;
    try {
      text = readFileSync(argvLog, 'utf8');
    } catch {
      return undefined;
    }
    for (const line of text.split('\n')) {
      const a = line.split('\t');
      if (a.includes('run') && a[a.indexOf('--name') + 1]?.endsWith(`-${name}-localhost`))
        return a.includes('--gpus') ? a[a.indexOf('--gpus') + 1] : 'none';
    }
    return undefined;
  };
  const uuids = (v: string | undefined) => /^"device=(.*)"$/.exec(v ?? '')?.[1].split(',') ?? [];
  const logOf = (name: string) => {
    const runDir = readdirSync(join(dir, 'sflow_output')).find((d) => d.startsWith(`${name}-`))!;
    return readFileSync(join(dir, 'sflow_output', runDir, name, `${name}.log`), 'utf8');
  };
  const waitFor = async (pred: () => boolean, what: string) => {
    const end = Date.now() + 60_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  };

  it('two concurrent runs get disjoint cards; a third fails fast; --wait-for-gpus waits', async () => {
    const a = run('gpua', 2, 10);
    const b = run('gpub', 2, 10);
    await waitFor(() => Boolean(granted('gpua') && granted('gpub')), 'both runs launched');
    const c = await run('gpuc', 1, 0);
    expect(c.code, c.stdout + c.stderr).toBe(1);
    expect(c.stdout + c.stderr).toMatch(/--wait-for-gpus/);
    expect(granted('gpuc')).toBeUndefined(); // nothing started
    const d = run('gpud', 1, 0, ['--wait-for-gpus', '120']);
    const [ra, rb, rd] = await Promise.all([a, b, d]);
    for (const r of [ra, rb, rd]) expect(r.code, r.stdout + r.stderr).toBe(0);

    // the argument carries its double quotes and the UUIDs the registry claimed
    for (const t of ['gpua', 'gpub', 'gpud'])
      expect(granted(t)).toMatch(/^"device=GPU-[0-9a-f-]+(,GPU-[0-9a-f-]+)*"$/);
    const [ua, ub] = [uuids(granted('gpua')), uuids(granted('gpub'))];
    expect([ua.length, ub.length]).toEqual([2, 2]);
    expect(new Set([...ua, ...ub]).size).toBe(4); // disjoint
    expect(uuids(granted('gpud'))).toHaveLength(1);
    // inside, the container sees its cards from 0 and no void
    expect(logOf('gpua')).toBe('cvd=0,1 nvd=unset\n');
    expect(logOf('gpud')).toBe('cvd=0 nvd=unset\n');
  });

  it('a CPU-only task gets NVIDIA_VISIBLE_DEVICES=void and no --gpus', async () => {
    const f = join(dir, 'cpu.yaml');
    writeFileSync(
      f,
      'version: "0.1"\nworkflow:\n  name: cpuonly\n  tasks:\n    - name: cpuonly\n      script: ["echo nvd=$NVIDIA_VISIBLE_DEVICES"]\n',
    );
    const r = await runs.sflow(['run', '-f', f, '-f', join(dir, 'docker.yaml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(granted('cpuonly')).toBe('none');
    expect(logOf('cpuonly')).toBe('nvd=void\n');
  });
  it('a raw --gpus in extra_args of a GPU task is warned about and passed through', async () => {
    const f = join(dir, 'raw.yaml');
    writeFileSync(
      f,
      'version: "0.1"\noperators:\n  - name: raw\n    type: docker_run\n    extra_args: [--gpus=all]\nworkflow:\n  name: rawgpus\n  tasks:\n    - name: rawgpus\n      operator: raw\n      resources:\n        gpus:\n          count: 1\n      script: ["echo ok"]\n',
    );
    const r = await runs.sflow(['run', '-f', f, '-f', join(dir, 'docker.yaml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/--gpus in extra_args adds to sflow's device request/);
    const line = readFileSync(argvLog, 'utf8')
      .split('\n')
      .find((l) => l.includes('-rawgpus-localhost'))!;
    expect(line.split('\t')).toEqual(expect.arrayContaining(['--gpus=all', '--gpus']));
  });
});
