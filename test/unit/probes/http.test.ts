import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { httpCheck, type HttpCheckOptions } from '../../../src/probes/http.js';
import type { ProbeTransport } from '../../../src/probes/types.js';

let server: Server;
let base = '';
const slowDropped = { count: 0 };
const seen: Array<{ method?: string; type?: string; body: string; auth?: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method,
        type: req.headers['content-type'],
        body,
        auth: req.headers.authorization,
      });
      switch (req.url) {
        case '/ok':
          res.end('status: ready\n');
          return;
        case '/moved':
          res.writeHead(302, { location: '/ok' }).end();
          return;
        case '/loop':
          res.writeHead(302, { location: '/loop' }).end();
          return;
        case '/down':
          res.writeHead(503).end('warming up');
          return;
        case '/slow':
          // never answers; counts the requests whose client hung up
          res.on('close', () => slowDropped.count++);
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const signal = () => new AbortController().signal;

describe('http probes', () => {
  it('GET: 200–399 is met, redirects are followed, other statuses are not', async () => {
    expect(await httpCheck({ method: 'GET', url: `${base}/ok` }).check(signal(), 2000)).toEqual({
      ok: true,
      detail: 'HTTP 200',
    });
    expect(await httpCheck({ method: 'GET', url: `${base}/moved` }).check(signal(), 2000)).toEqual({
      ok: true,
      detail: 'HTTP 200',
    });
    expect(await httpCheck({ method: 'GET', url: `${base}/down` }).check(signal(), 2000)).toEqual({
      ok: false,
      detail: 'HTTP 503',
    });
    expect(await httpCheck({ method: 'GET', url: `${base}/missing` }).check(signal(), 2000)).toEqual({
      ok: false,
      detail: 'HTTP 404',
    });
    const loop = await httpCheck({ method: 'GET', url: `${base}/loop` }).check(signal(), 2000);
    expect(loop.ok).toBe(false);
  });

  it('POST sends the body as text/plain by default, and the given headers', async () => {
    seen.length = 0;
    const c = httpCheck({
      method: 'POST',
      url: `${base}/ok`,
      body: 'ping',
      headers: { Authorization: 'Bearer x' },
    });
    expect(c.kind).toBe('http_post');
    expect(c.describe()).toBe(`http_post ${base}/ok`);
    expect((await c.check(signal(), 2000)).ok).toBe(true);
    expect(seen[0]).toEqual({
      method: 'POST',
      type: 'text/plain;charset=UTF-8',
      body: 'ping',
      auth: 'Bearer x',
    });
    seen.length = 0;
    await httpCheck({
      method: 'POST',
      url: `${base}/ok`,
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    }).check(signal(), 2000);
    expect(seen[0]).toMatchObject({ type: 'application/json', body: '{}' });
  });

  it('expected status and body match (extensions)', async () => {
    expect(
      await httpCheck({ method: 'GET', url: `${base}/down`, expectStatus: 503 }).check(signal(), 2000),
    ).toEqual({ ok: true, detail: 'HTTP 503' });
    expect(
      await httpCheck({ method: 'GET', url: `${base}/ok`, expectStatus: [201, 204] }).check(signal(), 2000),
    ).toEqual({
      ok: false,
      detail: 'HTTP 200 (expected 201/204)',
    });
    const lit = await httpCheck({ method: 'GET', url: `${base}/ok`, bodyMatch: 'ready' }).check(
      signal(),
      2000,
    );
    expect(lit).toEqual({ ok: true, detail: 'HTTP 200, body matched "ready"' });
    const re = await httpCheck({
      method: 'GET',
      url: `${base}/ok`,
      bodyMatch: 're:^status: (?P<s>\\w+)$',
    }).check(signal(), 2000);
    expect(re.ok).toBe(true);
    const miss = await httpCheck({ method: 'GET', url: `${base}/ok`, bodyMatch: 'healthy' }).check(
      signal(),
      2000,
    );
    expect(miss).toEqual({ ok: false, detail: 'HTTP 200, body did not match "healthy"' });
  });

  it('reports refused connections and per-check timeouts', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const refused = await httpCheck({ method: 'GET', url: `http://127.0.0.1:${closed}/` }).check(
      signal(),
      2000,
    );
    expect(refused).toEqual({ ok: false, detail: 'ECONNREFUSED' });
    const bad = await httpCheck({ method: 'GET', url: 'http://127.0.0.1:6000/' }).check(signal(), 2000);
    expect(bad.detail).toMatch(/bad port/);
    const dropped = slowDropped.count;
    const slow = await httpCheck({ method: 'GET', url: `${base}/slow` }).check(signal(), 150);
    expect(slow).toEqual({ ok: false, detail: 'no answer within 150 ms' });
    // the check hung up rather than leaving the connection open (a generous hang guard)
    await vi.waitFor(() => expect(slowDropped.count).toBe(dropped + 1), { timeout: 10_000 });
  });

  it('stops when the loop aborts the check', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await httpCheck({ method: 'GET', url: `${base}/slow` }).check(ac.signal, 5000);
    expect(r).toEqual({ ok: false, detail: 'check cut short' });
  });

  it('a transport (a probe pod) gets the same verdicts as the driver, marked with where it ran', async () => {
    const via: ProbeTransport = {
      where: 'probe pod p-1',
      tcp: () => Promise.reject(new Error('not used')),
      async http(req, timeoutMs, s) {
        const res = await fetch(req.url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal: s,
        });
        return { status: res.status, body: await res.text() };
      },
    };
    const cases: Array<Omit<HttpCheckOptions, 'method' | 'url'> & { path: string }> = [
      { path: '/ok' },
      { path: '/down' },
      { path: '/down', expectStatus: [200, 204] },
      { path: '/ok', bodyMatch: 're:^status: ready$' },
      { path: '/ok', bodyMatch: 'warming' },
      { path: '/down', expectStatus: 503, bodyMatch: 'warming up' },
    ];
    for (const { path, ...o } of cases) {
      const url = `${base}${path}`;
      const direct = await httpCheck({ method: 'GET', url, ...o }).check(signal(), 2000);
      const remote = await httpCheck({ method: 'GET', url, ...o, transport: via }).check(signal(), 2000);
      expect(remote.ok, path).toBe(direct.ok);
      expect(remote.detail).toBe(direct.detail.replace(/^HTTP (\d+)/, 'HTTP $1 (via probe pod p-1)'));
    }
  });
});
