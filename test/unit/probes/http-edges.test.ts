/**
 * The http probe check at its edges (src/probes/http.ts): the last status that counts as met, a
 * body that never ends (only its first MiB is read, then the rest is cancelled), a body pattern
 * that runs past the regex deadline (the probe stops for good), the exact words for a WHATWG bad
 * port, and a transport (a probe pod) asked for a POST without a body, answering an error or more
 * than a MiB. Complements http.test.ts.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCheck } from '../../../src/probes/http.js';
import type { ProbeTransport } from '../../../src/probes/types.js';

let server: Server;
let base = '';
const MiB = 1024 * 1024;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/399') return void res.writeHead(399).end('x');
    if (req.url === '/endless') {
      // a stream that never ends on its own: 64 KiB chunks until the client hangs up
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    if (req.url === '/aaa') return void res.end('a'.repeat(40) + '!');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const signal = () => new AbortController().signal;

describe('http check edges', () => {
  it('names a GET http_get, and counts 399 as met', async () => {
    const c = httpCheck({ method: 'GET', url: `${base}/399` });
    expect(c.kind).toBe('http_get');
    expect(c.describe()).toBe(`http_get ${base}/399`);
    expect(await c.check(signal(), 5000)).toEqual({ ok: true, detail: 'HTTP 399' });
  });

  it('reads only the first MiB of a body that never ends, then hangs up', async () => {
    const r = await httpCheck({ method: 'GET', url: `${base}/endless`, bodyMatch: 'b' }).check(
      signal(),
      20_000,
    );
    expect(r).toEqual({ ok: false, detail: 'HTTP 200, body did not match "b"' });
  });

  it('stops for good when the body pattern runs past the regex deadline', async () => {
    const c = httpCheck({ method: 'GET', url: `${base}/aaa`, bodyMatch: 're:^(a+)+$' });
    const first = await c.check(signal(), 10_000);
    expect(first.ok).toBe(false);
    expect(first.detail).toMatch(/^body pattern "re:\^\(a\+\)\+\$": /);
    expect(first.limit).toBe(first.detail);
    // later checks give the same verdict without running the pattern again
    expect(await c.check(signal(), 10_000)).toEqual(first);
  });

  it('words a WHATWG bad port', async () => {
    expect(await httpCheck({ method: 'GET', url: 'http://127.0.0.1:6000/' }).check(signal(), 2000)).toEqual({
      ok: false,
      detail: 'port refused by fetch (a WHATWG "bad port"); use another port',
    });
  });
});

describe('http check through a transport', () => {
  const transport = (
    answer: Awaited<ReturnType<ProbeTransport['http']>>,
    seen: unknown[] = [],
  ): ProbeTransport => ({
    where: 'probe pod p-1',
    tcp: () => Promise.reject(new Error('not used')),
    http: (req) => {
      seen.push(req);
      return Promise.resolve(answer);
    },
  });

  it('sends a POST with an empty body when none is given, text/plain unless told', async () => {
    const seen: unknown[] = [];
    const r = await httpCheck({
      method: 'POST',
      url: 'http://svc/ready',
      transport: transport({ status: 200, body: '' }, seen),
    }).check(signal(), 1000);
    expect(r).toEqual({ ok: true, detail: 'HTTP 200 (via probe pod p-1)' });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'http://svc/ready',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        body: '',
      },
    ]);
    const get: unknown[] = [];
    await httpCheck({
      method: 'GET',
      url: 'http://svc/ready',
      headers: { 'X-A': '1' },
      transport: transport({ status: 200, body: '' }, get),
    }).check(signal(), 1000);
    expect(get).toEqual([{ method: 'GET', url: 'http://svc/ready', headers: { 'X-A': '1' } }]);
  });

  it('reports the error the transport met, and where', async () => {
    const r = await httpCheck({
      method: 'GET',
      url: 'http://svc/ready',
      transport: transport({ error: 'ECONNREFUSED' }),
    }).check(signal(), 1000);
    expect(r).toEqual({ ok: false, detail: 'ECONNREFUSED (via probe pod p-1)' });
  });

  it('matches the body pattern within its first MiB only', async () => {
    const body = 'x'.repeat(MiB) + 'ready';
    const r = await httpCheck({
      method: 'GET',
      url: 'http://svc/ready',
      bodyMatch: 'ready',
      transport: transport({ status: 200, body }),
    }).check(signal(), 1000);
    expect(r).toEqual({ ok: false, detail: 'HTTP 200 (via probe pod p-1), body did not match "ready"' });
  });
});
