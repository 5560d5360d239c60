/**
 * The two SSH test hosts (scripts/engines/ssh.sh) do what the SSH pool and --ssh tests rely on: key-only
 * logins with checked host keys, exit codes and stdin over ssh, each host reaching its own Docker engine
 * (plain `ssh host docker …` and `docker -H ssh://…`), an account whose sessions have no Node.js, and
 * that account reaching the Slurm test cluster.
 */
import { afterAll, expect, it } from 'vitest';
import { describeWithEngines, engine } from '../helpers/engines.js';

const ssh = engine('ssh');
const docker = engine('docker');
const slurm = engine('slurm');

describeWithEngines('SSH test hosts', [ssh], () => {
  const cfg = () => ssh.get('SFLOW_TEST_SSH_CONFIG');
  const root = () => ssh.get('SFLOW_TEST_SSH_USER');
  const nonode = () => ssh.get('SFLOW_TEST_SSH_NONODE_USER');
  const alias = (h: 'a' | 'b') => ssh.get(`SFLOW_TEST_SSH_ALIAS_${h.toUpperCase()}`);
  const remote = (dest: string, command: string, opts: { input?: string } = {}) =>
    ssh.exec('ssh', ['-F', cfg(), dest, command], opts);
  const cleanups: string[] = [];
  afterAll(async () => {
    for (const dir of cleanups) await remote(`${nonode()}@${alias('a')}`, `rm -rf '${dir}'`);
  });

  it('each alias reaches its own sshd, also by address and port', async () => {
    for (const h of ['a', 'b'] as const) {
      const r = await remote(`${root()}@${alias(h)}`, 'echo $SFLOW_TEST_HOST_NAME');
      expect([r.exitCode, String(r.stdout)]).toEqual([0, h]);
    }
    const byAddr = await ssh.exec('ssh', [
      '-F', cfg(), '-p', ssh.get('SFLOW_TEST_SSH_PORT_B'),
      `${root()}@${ssh.get('SFLOW_TEST_SSH_HOST_B')}`, 'echo $SFLOW_TEST_HOST_NAME',
    ]); // prettier-ignore
    expect(String(byAddr.stdout)).toBe('b');
  });

  it('passes exit codes and stdin through', async () => {
    expect((await remote(`${root()}@${alias('a')}`, 'exit 4')).exitCode).toBe(4);
    const echo = await remote(`${root()}@${alias('b')}`, 'wc -c', { input: 'x'.repeat(100_000) });
    expect(String(echo.stdout).trim()).toBe('100000');
  });

  it('accepts keys only: without the client key the server offers nothing else', async () => {
    const r = await ssh.exec('ssh', [
      '-F', '/dev/null', '-p', ssh.get('SFLOW_TEST_SSH_PORT_A'),
      '-o', `UserKnownHostsFile=${ssh.get('SFLOW_TEST_SSH_KNOWN_HOSTS')}`, '-o', 'StrictHostKeyChecking=yes',
      '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'IdentityFile=/nonexistent',
      `${root()}@${ssh.get('SFLOW_TEST_SSH_HOST_A')}`, 'true',
    ]); // prettier-ignore
    expect(r.exitCode).toBe(255);
    expect(String(r.stderr)).toMatch(/Permission denied \(publickey\)/);
  });

  it(`the no-Node account has no node on PATH in plain, login and interactive shells`, async () => {
    const dest = `${nonode()}@${alias('a')}`;
    const plain = await remote(dest, 'id -un; command -v node || echo no-node');
    expect(String(plain.stdout).split('\n')).toEqual([nonode(), 'no-node']);
    const login = await remote(dest, `bash -lc 'command -v node || echo no-node'`);
    expect(String(login.stdout)).toBe('no-node');
    const interactive = await remote(dest, `bash -ic 'command -v node || echo no-node' 2>/dev/null`);
    expect(String(interactive.stdout)).toBe('no-node');
    // while root on the same host does have it: the difference is the account, not the machine
    const asRoot = await remote(`${root()}@${alias('a')}`, 'command -v node');
    expect(String(asRoot.stdout)).toMatch(/\/node$/);
    // and the account can make itself a working directory, as a remote sflow cache needs
    const tmp = await remote(dest, 'd=$(mktemp -d) && touch "$d/ok" && ls "$d" && echo "$d"');
    const [ls, dir] = String(tmp.stdout).split('\n');
    cleanups.push(dir);
    expect(ls).toBe('ok');
  });

  describeWithEngines('with the Docker test engines', [docker], () => {
    const rootDir = async (dockerHost: string) =>
      String(
        (await docker.exec('docker', ['-H', dockerHost, 'info', '--format', '{{.DockerRootDir}}'])).stdout,
      );

    it('`ssh host docker …` reaches engine a on host a and engine b on host b', async () => {
      for (const [h, key] of [
        ['a', 'DOCKER_HOST'],
        ['b', 'SFLOW_TEST_DOCKER_HOST_B'],
      ] as const) {
        const r = await remote(`${root()}@${alias(h)}`, `docker info --format '{{.DockerRootDir}}'`);
        expect([r.exitCode, String(r.stdout)]).toEqual([0, await rootDir(docker.get(key))]);
      }
    });

    it('`docker -H ssh://user@address:port` reaches the engine of that host', async () => {
      const path = `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH}`;
      const url = `ssh://${root()}@${ssh.get('SFLOW_TEST_SSH_HOST_B')}:${ssh.get('SFLOW_TEST_SSH_PORT_B')}`;
      const r = await ssh.exec('docker', ['-H', url, 'info', '--format', '{{.DockerRootDir}}'], {
        env: { PATH: path, DOCKER_HOST: '' },
      });
      expect([r.exitCode, String(r.stdout)]).toEqual([
        0,
        await rootDir(docker.get('SFLOW_TEST_DOCKER_HOST_B')),
      ]);
      const run = await ssh.exec(
        'docker',
        [
          '-H',
          `ssh://${root()}@${alias('a')}`,
          'run',
          '--rm',
          docker.get('SFLOW_TEST_DOCKER_IMAGE'),
          'echo',
          'via-ssh',
        ],
        { env: { PATH: path, DOCKER_HOST: '' } },
      );
      expect([run.exitCode, String(run.stdout)]).toEqual([0, 'via-ssh']);
    });
  });

  describeWithEngines('with the Slurm test cluster', [slurm], () => {
    it('the no-Node account runs steps on the cluster over ssh (SLURM_CONF comes from sshd)', async () => {
      const r = await remote(`${nonode()}@${alias('b')}`, 'srun -N2 -l printenv SLURMD_NODENAME');
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stdout).split('\n').sort()).toEqual(['0: n1', '1: n2']);
    });
  });
});
