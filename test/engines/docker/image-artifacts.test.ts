/**
 * `docker://` artifacts on the real engines a and b, as a pool over the SSH fixture: an image
 * made by `docker save` and put on the engines with `docker load` is found on both hosts before
 * anything starts, and the task runs in it through `image: ${{ artifacts.IMG.path }}`. With the
 * image gone from host b and `SFLOW_DOCKER_PULL=never` the run stops before any container starts,
 * naming host b; with pulling allowed the engine's `docker pull` is tried and its failure (no
 * registry serves the name here) is reported the same way, bounded; and where a registry serves it
 * (test/fixtures/docker-registry: the saved image over the Registry API), host b pulls it and the
 * task runs on both hosts.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { startRegistry } from '../../fixtures/docker-registry/server.js';
import { HOST_MOUNTS } from './fixture.js';

const docker = engine('docker');
const ssh = engine('ssh');
const IMAGE = `sflowtest/loaded:${process.pid}`;

describeWithEngines('docker:// artifacts on the pool', [docker, ssh], () => {
  const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];
  let dir: string;
  let tar: string;
  let env: NodeJS.ProcessEnv;
  const onEngine = (host: string, args: string[], input?: string) =>
    docker.exec('docker', ['-H', host, ...args], { ...(input ? { input } : {}), timeout: 120_000 });
  const load = async (host: string) => {
    const r = await onEngine(host, ['load', '-i', tar]);
    expect(r.exitCode, String(r.stderr)).toBe(0);
  };

  beforeAll(async () => {
    dir = scratchDir('sflow-docker-images-');
    tar = join(dir, 'image.tar');
    const [a, b] = engines();
    // made on engine a, saved to a file, removed, then loaded onto both engines
    const base = docker.get('SFLOW_TEST_DOCKER_IMAGE');
    const build = await onEngine(
      a,
      ['build', '-q', '-t', IMAGE, '-'],
      `FROM ${base}\nENV PATH=/usr/local/bin:/usr/bin:/bin\nLABEL sflowtest=loaded\n`,
    );
    expect(build.exitCode, String(build.stderr)).toBe(0);
    expect((await onEngine(a, ['save', '-o', tar, IMAGE])).exitCode).toBe(0);
    await onEngine(a, ['rmi', '-f', IMAGE]);
    await load(a);
    await load(b);
    env = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH ?? ''}`,
      SFLOW_TASK_OUTPUT: 'never',
    };
    delete env.DOCKER_HOST;
  });
  afterAll(async () => {
    for (const h of engines()) await onEngine(h, ['rmi', '-f', IMAGE]);
  });

  const recipe = (name: string, image = IMAGE) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      [
        'version: "0.1"',
        'artifacts:',
        `  - name: IMG`,
        `    uri: docker://${image}`,
        'operators:',
        '  - name: box',
        '    type: docker_run',
        '    image: ${{ artifacts.IMG.path }}',
        'backends:',
        '  - name: pool',
        '    type: docker',
        '    default: true',
        `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
        "    extra_args: ['--network=host']",
        '    hosts:',
        `      - {name: a, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}, rendezvous_address: 127.0.0.1}`,
        `      - {name: b, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}, rendezvous_address: 127.0.0.2}`,
        'workflow:',
        `  name: ${name}`,
        '  tasks:',
        `    - name: ${name}`,
        '      operator: box',
        '      resources: {nodes: {count: 2}}',
        '      script: [\'echo "in=$IMG"\']',
        '',
      ].join('\n'),
    );
    return f;
  };
  const runDirs = () => {
    try {
      return readdirSync(join(dir, 'sflow_output'));
    } catch {
      return [];
    }
  };

  it('a loaded image is found on both hosts and the task runs in it', async () => {
    const r = await sflowAsync(['run', '-f', recipe('imgok')], { cwd: dir, env, timeoutMs: 150_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toContain(`✓ artifact 'IMG': ${IMAGE} present on 2 engine(s)`);
    expect(r.stderr).not.toContain('pulling');
    const run = runDirs().find((d) => d.startsWith('imgok-'))!;
    const log = readFileSync(join(dir, 'sflow_output', run, 'imgok', 'imgok.log'), 'utf8');
    expect(log.split('\n').filter(Boolean).sort()).toEqual([`[a #0] in=${IMAGE}`, `[b #1] in=${IMAGE}`]);
  });

  it('missing on host b: SFLOW_DOCKER_PULL=never stops the run naming b; a pull is tried and its failure named', async () => {
    const [, b] = engines();
    await onEngine(b, ['rmi', '-f', IMAGE]);
    try {
      const before = runDirs().length;
      const never = await sflowAsync(['run', '-f', recipe('imgnever')], {
        cwd: dir,
        env: { ...env, SFLOW_DOCKER_PULL: 'never' },
        timeoutMs: 150_000,
      });
      expect(never.code).toBe(1);
      expect(never.stderr).toContain(
        `artifact 'IMG': ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}: ${IMAGE} is not there and SFLOW_DOCKER_PULL=never`,
      );
      expect(never.stderr).not.toContain(`ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}:`);
      expect(runDirs().length).toBe(before); // stopped before the run folder was made

      const pull = await sflowAsync(['run', '-f', recipe('imgpull')], {
        cwd: dir,
        env: { ...env, SFLOW_DOCKER_PULL_TIMEOUT_S: '60' },
        timeoutMs: 150_000,
      });
      expect(pull.code).toBe(1);
      expect(pull.stderr).toContain(
        `⇣ artifact 'IMG': pulling ${IMAGE} on ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}`,
      );
      expect(pull.stderr).toContain(
        `ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}: docker pull ${IMAGE} failed: `,
      );
      expect(runDirs().length).toBe(before);
    } finally {
      await load(b);
    }
  });

  it('where a registry serves the image, host b pulls it and the task runs on both hosts', async () => {
    const registry = await startRegistry(tar);
    const [a, b] = engines();
    const served = `${registry.host}/${IMAGE}`;
    try {
      expect((await onEngine(a, ['tag', IMAGE, served])).exitCode).toBe(0); // a has it, b does not
      const r = await sflowAsync(['run', '-f', recipe('imgpulled', served)], {
        cwd: dir,
        env,
        timeoutMs: 150_000,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `✓ artifact 'IMG': ${served} present on 2 engine(s) (pulled on ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')})`,
      );
      expect(registry.requests).toEqual(
        expect.arrayContaining([expect.stringMatching(/^GET \/v2\/sflowtest\/loaded\/manifests\//)]),
      );
      const run = runDirs().find((d) => d.startsWith('imgpulled-'))!;
      const log = readFileSync(join(dir, 'sflow_output', run, 'imgpulled', 'imgpulled.log'), 'utf8');
      expect(log.split('\n').filter(Boolean).sort()).toEqual([`[a #0] in=${served}`, `[b #1] in=${served}`]);
      expect((await onEngine(b, ['image', 'inspect', served])).exitCode).toBe(0);
    } finally {
      for (const h of engines()) await onEngine(h, ['rmi', '-f', served]);
      await registry.close();
    }
  });
});
