import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runProbeLoop } from '../../../src/probes/loop.js';
import { tcpPortCheck, tryConnect } from '../../../src/probes/tcp.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A free port: listen on 0, note the port, close. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function listen(port: number, host = '127.0.0.1'): Promise<Server> {
  const s = createServer((c) => c.destroy());
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, host, r));
  return s;
}

describe('tcp_port', () => {
  it('reports refused and open ports', async () => {
    const port = await freePort();
    const check = tcpPortCheck({ port });
    expect(check.describe()).toBe(`tcp_port 127.0.0.1:${port}`);
    const ac = new AbortController();
    expect(await check.check(ac.signal, 1000)).toEqual({
      ok: false,
      detail: `127.0.0.1:${port} ECONNREFUSED`,
    });
    await listen(port);
    expect(await check.check(ac.signal, 1000)).toEqual({ ok: true, detail: `127.0.0.1:${port} open` });
  });

  it('detects readiness within interval + 50 ms of the port opening', async () => {
    const port = await freePort();
    const interval = 100;
    let listenedAt = 0;
    setTimeout(() => {
      void listen(port).then(() => (listenedAt = Date.now()));
    }, 230);
    const out = await runProbeLoop({
      check: tcpPortCheck({ port }),
      delayMs: 0,
      intervalMs: interval,
      threshold: 1,
      eachCheckTimeoutMs: 1000,
    });
    const detected = Date.now();
    expect(out.passed).toBe(true);
    expect(listenedAt).toBeGreaterThan(0);
    expect(detected - listenedAt).toBeLessThanOrEqual(interval + 50);
    expect(out.checks).toBeGreaterThanOrEqual(2);
  });

  it('with several hosts (on_node: each) needs every one of them', async () => {
    const port = await freePort();
    await listen(port, '127.0.0.1');
    const ac = new AbortController();
    const both = tcpPortCheck({ hosts: ['127.0.0.1', '127.0.0.2'], port });
    const r = await both.check(ac.signal, 1000);
    expect(r).toEqual({ ok: false, detail: `127.0.0.2:${port} ECONNREFUSED` });
    await listen(port, '127.0.0.2');
    expect(await both.check(ac.signal, 1000)).toEqual({ ok: true, detail: '2 hosts open' });
  });

  it('gives up when aborted', async () => {
    const port = await freePort();
    const ac = new AbortController();
    ac.abort();
    expect((await tryConnect('127.0.0.1', port, 1000, ac.signal)).ok).toBe(false);
  });
});
