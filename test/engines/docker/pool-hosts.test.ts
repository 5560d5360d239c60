/**
 * Choosing and reaching Docker pool hosts, on the real engines a and b behind the SSH fixture:
 * `include_nodes` / `exclude_nodes` keep only some hosts (the task lands on the one left, and
 * only that engine sees a container); a host given as a docker `context:` is reached with
 * `docker --context <name>` (an ssh:// context and a unix:// one, contexts in a private
 * DOCKER_CONFIG; DOCKER_HOST pointing elsewhere does not win), the ssh:// one is sampled by the
 * monitor over its context's ssh URL; a context that does not exist fails the pre-flight.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';

const docker = engine('docker');
const ssh = engine('ssh');

describeWithEngines('Docker pool hosts: include/exclude and context', [docker, ssh], () => {
  const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];
  const ctxA = `sflowt${process.pid}-a`;
  const ctxB = `sflowt${process.pid}-b`;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    await buildHostbinImage(docker, engines());
    dir = scratchDir('sflow-docker-pool-hosts-');
    env = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH ?? ''}`,
      SFLOW_TASK_OUTPUT: 'never',
      DOCKER_CONFIG: join(dir, 'docker-config'),
    };
    delete env.DOCKER_HOST;
    const mk = (name: string, url: string) =>
      docker.exec('docker', ['context', 'create', name, '--docker', `host=${url}`], { env });
    for (const r of [
      await mk(ctxA, `ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}`),
      await mk(ctxB, engines()[1]),
    ])
      expect(r.exitCode, String(r.stderr)).toBe(0);
  });
  afterAll(async () => {
    await removeHostbinImage(docker, engines());
    if (dir) rmSync(join(dir, 'docker-config'), { recursive: true, force: true });
  });

  const hostA = `{name: a, address: ${ssh.skip ? 'x' : ssh.get('SFLOW_TEST_SSH_ALIAS_A')}, rendezvous_address: 127.0.0.1}`;
  const hostB = `{name: b, address: ${ssh.skip ? 'x' : ssh.get('SFLOW_TEST_SSH_ALIAS_B')}, rendezvous_address: 127.0.0.2}`;
  const recipe = (name: string, nodes: number, hosts: string[], extra: string[] = []) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      [
        'version: "0.1"',
        'backends:',
        '  - name: pool',
        '    type: docker',
        '    default: true',
        `    image: ${HOSTBIN_IMAGE}`,
        `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
        "    extra_args: ['--network=host']",
        ...extra.map((l) => `    ${l}`),
        '    hosts:',
        ...hosts.map((h) => `      - ${h}`),
        'workflow:',
        `  name: ${name}`,
        '  tasks:',
        `    - name: ${name}`,
        `      resources: {nodes: {count: ${nodes}}}`,
        '      script: [\'echo "node=$SFLOW_TASK_NODE_INDEX leader=$SFLOW_LEADER_ADDRESS"\']',
        '',
      ].join('\n'),
    );
    return f;
  };
  const runDir = (name: string) => {
    const d = readdirSync(join(dir, 'sflow_output')).find((x) => x.startsWith(`${name}-`))!;
    return join(dir, 'sflow_output', d);
  };
  /** names of the containers an engine created since `since` (its event log) */
  const created = async (engineHost: string, since: number, prefix: string) => {
    const r = await docker.exec('docker', [
      '-H',
      engineHost,
      'events',
      '--since',
      String(Math.floor(since / 1000) - 1),
      '--until',
      String(Math.ceil(Date.now() / 1000) + 1),
      '--filter',
      'event=create',
      '--format',
      '{{.Actor.Attributes.name}}',
    ]);
    return String(r.stdout)
      .split('\n')
      .filter((n) => n.includes(prefix));
  };

  it.each([
    ['include_nodes: [b]', 'inc', []],
    // plus log offload, which a pool host cannot do: warned, and the output streams as usual
    ['exclude_nodes: [a]', 'exc', ['offload_task_logs: true']],
  ])('%s: the one-node task runs on host b only', async (filter, tag, more) => {
    const name = `filter${tag}`;
    const f = recipe(name, 1, [hostA, hostB], [filter, ...more]);
    const since = Date.now();
    const r = await sflowAsync(['run', '-f', f], { cwd: dir, env, timeoutMs: 150_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    if (more.length)
      expect(r.stderr).toContain(
        `task '${name}' offload_task_logs (a pool host does not mount the run directory): the container's output streams through its attached client`,
      );
    expect(readFileSync(join(runDir(name), name, `${name}.log`), 'utf8').trim()).toBe(
      'node=0 leader=127.0.0.2',
    );
    expect(await created(engines()[1], since, `-${name}-b`)).toHaveLength(1);
    expect(await created(engines()[0], since, `-${name}-`)).toEqual([]);
  });

  it('a host naming no pool host in include_nodes is a located plan error', async () => {
    const f = recipe('filterbad', 1, [hostA, hostB], ['include_nodes: [c]']);
    const r = await sflowAsync(['run', '--dry-run', '-f', f], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`filterbad.yaml:9:21:`);
    expect(r.stderr).toContain(
      "backend 'pool': include_nodes names 'c', which is not one of its hosts (a, b)",
    );
  });

  it('context hosts: docker --context per host, monitored over the ssh context, DOCKER_HOST elsewhere', async () => {
    const name = 'ctxspan';
    const f = recipe(name, 2, [
      `{name: a, context: ${ctxA}, rendezvous_address: 127.0.0.1}`,
      `{name: b, context: ${ctxB}, ip_address: 127.0.0.2}`,
    ]);
    const dry = await sflowAsync(['run', '--dry-run', '-f', f], { cwd: dir, env });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`docker --context ${ctxA} run`);
    expect(dry.stdout).toContain(`docker --context ${ctxB} run`);

    const since = Date.now();
    // DOCKER_HOST names engine a: a context given with --context must still win for host b
    const r = await sflowAsync(['run', '-f', f, '--enable-workflow-monitor'], {
      cwd: dir,
      env: { ...env, DOCKER_HOST: engines()[0] },
      timeoutMs: 150_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const log = readFileSync(join(runDir(name), name, `${name}.log`), 'utf8');
    expect(log.split('\n').filter(Boolean).sort()).toEqual([
      '[a #0] node=0 leader=127.0.0.1',
      '[b #1] node=1 leader=127.0.0.1',
    ]);
    expect(await created(engines()[0], since, `-${name}-`)).toEqual([expect.stringMatching(/-a$/)]);
    expect(await created(engines()[1], since, `-${name}-`)).toEqual([expect.stringMatching(/-b$/)]);
    // host a (ssh:// context) is sampled on the host over ssh
    const raw = join(runDir(name), 'sflow_monitor', 'raw');
    const rows = readdirSync(raw)
      .filter((n) => /^[a-z]+_monitor_node_0_a\.log$/.test(n))
      .flatMap((n) =>
        readFileSync(join(raw, n), 'utf8')
          .split('\n')
          .filter((l) => /^\d+\.\d{3},/.test(l)),
      );
    expect(rows.length).toBeGreaterThan(0);
  });

  it('a context that does not exist fails the pre-flight, naming the host and the context', async () => {
    const f = recipe('ctxgone', 1, [`{name: a, context: sflowt-no-such-context, ip_address: 127.0.0.1}`]);
    const r = await sflowAsync(['run', '-f', f], { cwd: dir, env, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("host 'a': docker context 'sflowt-no-such-context'");
    expect(r.stderr).toContain('context not found');
  });
});
