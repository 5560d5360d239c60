/**
 * The two Docker test engines (scripts/engines/docker.sh) do what the Docker backend tests rely on:
 * run with exit codes, `logs -f`, --network=host reaching a server on this host, `rm -f`, and they are
 * two independent engines (a container on one is not seen by the other).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngines, engine } from '../helpers/engines.js';

const docker = engine('docker');
const tag = `sflowfx-${process.pid}`;

describeWithEngines('Docker test engines', [docker], () => {
  const hosts = () => ({ a: docker.get('DOCKER_HOST'), b: docker.get('SFLOW_TEST_DOCKER_HOST_B') });
  const image = () => docker.get('SFLOW_TEST_DOCKER_IMAGE');
  const dk = (host: string, args: string[]) => docker.exec('docker', ['-H', host, ...args]);

  let server: Server;
  let port: number;
  const secret = `pong-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end(secret));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const host of Object.values(hosts())) {
      const ids = String((await dk(host, ['ps', '-aq', '--filter', `name=${tag}`])).stdout)
        .split(/\s+/)
        .filter(Boolean);
      if (ids.length) await dk(host, ['rm', '-f', ...ids]);
    }
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('the two engines are distinct daemons', async () => {
    const roots = await Promise.all(
      Object.values(hosts()).map(async (h) =>
        String((await dk(h, ['info', '--format', '{{.DockerRootDir}}'])).stdout),
      ),
    );
    expect(roots[0]).toMatch(/docker\/a\/root$/);
    expect(roots[1]).toMatch(/docker\/b\/root$/);
  });

  for (const name of ['a', 'b'] as const) {
    it(`engine ${name}: run prints output and returns the container's exit code`, async () => {
      const host = hosts()[name];
      const ok = await dk(host, ['run', '--rm', image(), 'sh', '-c', 'echo hello-$((6 * 7))']);
      expect([ok.exitCode, String(ok.stdout)]).toEqual([0, 'hello-42']);
      const bad = await dk(host, ['run', '--rm', image(), 'sh', '-c', 'exit 7']);
      expect(bad.exitCode).toBe(7);
    });

    it(`engine ${name}: logs -f follows a detached container to its end; wait gives its code`, async () => {
      const host = hosts()[name];
      const run = await dk(host, [
        'run', '-d', '--name', `${tag}-logs-${name}`, image(),
        'sh', '-c', 'for i in 1 2 3; do echo tick $i; sleep 0.2; done; exit 3',
      ]); // prettier-ignore
      expect(run.exitCode, String(run.stderr)).toBe(0);
      const id = String(run.stdout).trim();
      const logs = await dk(host, ['logs', '-f', id]);
      expect(String(logs.stdout).split('\n')).toEqual(['tick 1', 'tick 2', 'tick 3']);
      expect(String((await dk(host, ['wait', id])).stdout).trim()).toBe('3');
      expect((await dk(host, ['rm', id])).exitCode).toBe(0);
    });

    it(`engine ${name}: --network=host reaches a server listening on this host's loopback`, async () => {
      const r = await dk(hosts()[name], [
        'run', '--rm', '--network=host', image(), 'wget', '-q', '-O', '-', `http://127.0.0.1:${port}/`,
      ]); // prettier-ignore
      expect([r.exitCode, String(r.stdout)]).toEqual([0, secret]);
    });

    it(`engine ${name}: rm -f removes a running container`, async () => {
      const host = hosts()[name];
      const cname = `${tag}-rm-${name}`;
      const run = await dk(host, ['run', '-d', '--name', cname, image(), 'sleep', '300']);
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(String((await dk(host, ['ps', '-q', '--filter', `name=${cname}`])).stdout).trim()).not.toBe('');
      expect((await dk(host, ['rm', '-f', cname])).exitCode).toBe(0);
      expect(String((await dk(host, ['ps', '-aq', '--filter', `name=${cname}`])).stdout).trim()).toBe('');
    });
  }

  it('a container created on engine a is not seen by engine b', async () => {
    const { a, b } = hosts();
    const cname = `${tag}-only-a`;
    expect((await dk(a, ['create', '--name', cname, image(), 'true'])).exitCode).toBe(0);
    expect(String((await dk(a, ['ps', '-aq', '--filter', `name=${cname}`])).stdout).trim()).not.toBe('');
    expect(String((await dk(b, ['ps', '-aq', '--filter', `name=${cname}`])).stdout).trim()).toBe('');
    await dk(a, ['rm', '-f', cname]);
  });
});
