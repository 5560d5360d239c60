/**
 * The tcp_port and http kinds from recipe to check (issue 31's mutation run on src/probes/kinds):
 * what each plans from its recipe fields, where `place` points it (the node addresses, `on_node:
 * each`), its one-line description, its `--dry-run` text, the plan errors, and the request its
 * check really sends (a local HTTP server records it).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { renderDryRun } from '../../../src/plan/render.js';
import type { PlannedProbe } from '../../../src/plan/types.js';
import { createProbeCheck } from '../../../src/probes/probe-adapter.js';
import { tcpHosts, tcpPortProbe } from '../../../src/probes/kinds/tcp.js';
import { describeProbe } from '../../../src/probes/registry.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-probe-kinds-');
let n = 0;

function planOf(probes: string) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(
    file,
    `workflow:\n  name: w\n  tasks:\n    - name: srv\n      script:\n        - echo hi\n      probes:\n${probes}`,
  );
  const loaded = loadRecipe({ files: [file] });
  const plan = buildPlan(loaded, {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
  const lines = renderDryRun(plan, loaded)
    .split('\n')
    .filter((l) => l.includes('probe '))
    .map((l) => l.trim());
  return { probes: plan.tasks[0]?.probes ?? { readiness: [], failure: [] }, lines };
}

function planError(probes: string): SflowError {
  try {
    planOf(probes);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a plan error');
}

const TIMING = 'delay=0s interval=5s timeout=1200s each_check_timeout=30s';

describe('tcp_port', () => {
  it('plans the port, the host when given, and on_node', () => {
    const { probes, lines } = planOf(
      '        readiness:\n          - tcp_port: {port: 8000, host: 10.0.0.5}\n          - tcp_port: {port: 8001}\n' +
        '        failure:\n          - tcp_port: {port: 9000, on_node: each}\n',
    );
    expect(probes.readiness[0]).toMatchObject({
      port: 8000,
      host: '10.0.0.5',
      onNode: 'first',
      hosts: ['10.0.0.5'],
    });
    expect(probes.readiness[1]).toMatchObject({
      port: 8001,
      host: '127.0.0.1',
      onNode: 'first',
      hosts: ['127.0.0.1'],
    });
    expect(probes.failure[0]).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      onNode: 'each',
      hosts: ['127.0.0.1'],
    });
    expect(lines).toEqual([
      `probe readiness: tcp_port 10.0.0.5:8000 (${TIMING}, threshold=1)`,
      `probe readiness: tcp_port 127.0.0.1:8001 (${TIMING}, threshold=1)`,
      'probe failure: tcp_port 127.0.0.1:9000 (delay=0s interval=5s each_check_timeout=30s, threshold=3)',
    ]);
  });

  it('a port that is not an integer is a plan error naming the field', () => {
    const e = planError('        readiness:\n          tcp_port: {port: "${{ 1.5 }}"}\n');
    expect(e.message).toMatch(/port/);
  });

  it('places on the first node, or every distinct node with on_node: each (a given host wins)', () => {
    const facts = {
      nodeIps: ['10.0.0.1', '', '10.0.0.2', '10.0.0.2'],
      ownName: 'srv',
      instanceOf: (b: string) => b,
    };
    expect(tcpPortProbe.place({ port: 1, onNode: 'first' }, facts)).toEqual({
      port: 1,
      host: '10.0.0.1',
      onNode: 'first',
      hosts: ['10.0.0.1'],
    });
    // an empty address stands for the first node's
    expect(tcpPortProbe.place({ port: 1, onNode: 'each' }, facts).hosts).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(tcpPortProbe.place({ port: 1, onNode: 'each', host: 'db' }, facts)).toEqual({
      port: 1,
      host: 'db',
      onNode: 'each',
      hosts: ['db'],
    });
    const none = { ...facts, nodeIps: [] };
    expect(tcpPortProbe.place({ port: 1, onNode: 'each' }, none)).toEqual({
      port: 1,
      host: '127.0.0.1',
      onNode: 'each',
      hosts: ['127.0.0.1'],
    });
  });

  it('checks and describes every node for on_node: each, one host otherwise', () => {
    expect(tcpHosts({ onNode: 'each', hosts: ['a', 'b'], host: 'a' })).toEqual(['a', 'b']);
    expect(tcpHosts({ onNode: 'each', hosts: [], host: 'h' })).toEqual(['h']);
    expect(tcpHosts({ onNode: 'first', hosts: ['a', 'b'], host: 'h' })).toEqual(['h']);
    expect(tcpHosts({ onNode: 'first', hosts: ['a', 'b'] })).toEqual(['a']);
    expect(tcpHosts({ onNode: 'first', hosts: [] })).toEqual(['127.0.0.1']);
    const p = {
      kind: 'tcp_port',
      role: 'readiness',
      port: 7,
      host: 'a',
      onNode: 'each',
      hosts: ['a', 'b'],
    } as unknown as PlannedProbe;
    expect(describeProbe(p)).toBe('tcp_port a:7,b:7');
  });
});

describe('http_get and http_post', () => {
  it('plan the URL, headers as text, statuses as a list, the body pattern and the POST body', () => {
    const { probes, lines } = planOf(
      '        readiness:\n' +
        '          - http_get: {url: "http://127.0.0.1:8000/health", headers: {A: 1, B: x}, expected_status: [200, 204], body_match: ok}\n' +
        '          - http_post: {url: "HTTPS://h/p", body: "{}", expected_status: 201}\n' +
        '          - http_post: {url: "http://h/q"}\n' +
        '          - http_get: {url: "http://h/r", body_match: "re:^up$"}\n',
    );
    expect(probes.readiness[0]).toMatchObject({
      url: 'http://127.0.0.1:8000/health',
      headers: { A: '1', B: 'x' },
      expectStatus: [200, 204],
      bodyMatch: 'ok',
    });
    expect(probes.readiness[0]).not.toHaveProperty('body');
    expect(probes.readiness[1]).toMatchObject({ url: 'HTTPS://h/p', expectStatus: [201], body: '{}' });
    expect(probes.readiness[1]).not.toHaveProperty('headers');
    expect(probes.readiness[1]).not.toHaveProperty('bodyMatch');
    expect(probes.readiness[2]).toMatchObject({ url: 'http://h/q', body: '' });
    expect(probes.readiness[2]).not.toHaveProperty('expectStatus');
    expect(lines).toEqual([
      `probe readiness: http_get http://127.0.0.1:8000/health status in [200, 204] body ~ "ok" (${TIMING})`,
      `probe readiness: http_post HTTPS://h/p status in [201] (${TIMING})`,
      `probe readiness: http_post http://h/q (${TIMING})`,
      `probe readiness: http_get http://h/r body ~ "re:^up$" (${TIMING})`,
    ]);
    expect(describeProbe(probes.readiness[1])).toBe('http_post HTTPS://h/p');
  });

  it('refuses a URL that is not http(s), at the schema and, from an expression, at planning', () => {
    const e = planError('        readiness:\n          http_get: {url: "ftp://h/x"}\n');
    expect(e.message).toContain("http probe URL must start with http:// or https://, got 'ftp://h/x'");
    const p = planError('        readiness:\n          http_get: {url: "${{ \'ftp://h/\' }}"}\n');
    expect(p.code).toBe('plan.probe_url');
    expect(p.message).toContain("http_get probe of task 'srv': unsupported URL scheme in 'ftp://h/'");
    expect(p.hint).toBe('use an http:// or https:// URL');
  });
});

describe('the http check sends what was planned', () => {
  const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(req.url === '/created' ? 201 : 200);
      res.end(req.url === '/text' ? 'all up here' : 'ok');
    });
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const check = async (probes: string) => {
    const { probes: planned } = planOf(probes.replaceAll('BASE', base));
    const p = planned.readiness[0];
    const c = createProbeCheck(p, { task: { name: 'srv', env: {}, outputDir: dir }, logPath: '/dev/null' });
    return c.check(new AbortController().signal, 5_000);
  };

  it('POST with its body and headers; the statuses and body pattern decide', async () => {
    const post = await check(
      '        readiness:\n          http_post: {url: "BASE/created", body: "{\\"a\\": 1}", headers: {X-Key: v}, expected_status: 201}\n',
    );
    expect(post.ok).toBe(true);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/created', body: '{"a": 1}' });
    expect(seen.at(-1)?.headers['x-key']).toBe('v');
    const wrongStatus = await check(
      '        readiness:\n          http_get: {url: "BASE/plain", expected_status: 204}\n',
    );
    expect(wrongStatus.ok).toBe(false);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/plain' });
    expect(
      (await check('        readiness:\n          http_get: {url: "BASE/text", body_match: "up here"}\n')).ok,
    ).toBe(true);
    expect(
      (await check('        readiness:\n          http_get: {url: "BASE/text", body_match: "down"}\n')).ok,
    ).toBe(false);
  });
});
