/**
 * tcp_port at its edges (src/probes/tcp.ts): a port that never answers (a listener whose accept
 * queue is full: a Node process that listens with backlog 0 and then blocks), a check cut short
 * while connecting, a check asked after its loop stopped, IPv6 addresses in brackets, and how the
 * verdicts of many hosts are put together (at most three shown, then how many more).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tcpPortCheck, tryConnect } from '../../../src/probes/tcp.js';
import type { CheckResult, ProbeTransport } from '../../../src/probes/types.js';

let blocked: ChildProcess;
let port = 0;
const held: Socket[] = [];

beforeAll(async () => {
  // listens with a backlog of 1, then blocks its event loop: it never accepts, so once its queue
  // is full, the kernel leaves further ones unanswered. It blocks until its parent (this test
  // process) is gone, then exits: it cannot outlive a test run that dies before afterAll.
  blocked = spawn(
    process.execPath,
    [
      '-e',
      "const s = require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {" +
        ' process.stdout.write(String(s.address().port) + "\\n");' +
        ' const parent = process.ppid, cell = new Int32Array(new SharedArrayBuffer(4));' +
        ' while (process.ppid === parent) Atomics.wait(cell, 0, 0, 500);' +
        ' process.exit(0); });',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  port = await new Promise<number>((resolve) =>
    blocked.stdout!.once('data', (d: Buffer) => resolve(Number(d))),
  );
  // fill the queue: connect until one attempt is left unanswered (the kernel's queue length is
  // the backlog plus one or so, depending on the kernel); a queued connection is answered by the
  // kernel at once, so 2 s without an answer means the queue is full, even on a loaded machine
  for (let i = 0; i < 8; i++) {
    const s = connect({ host: '127.0.0.1', port });
    const answered = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), 2000);
      s.once('connect', () => {
        clearTimeout(t);
        resolve(true);
      });
    });
    held.push(s);
    if (!answered) return;
  }
  throw new Error('the blocked listener kept accepting connections');
});
afterAll(() => {
  for (const s of held) s.destroy();
  blocked?.kill('SIGKILL');
});

const signal = () => new AbortController().signal;

describe('tryConnect', () => {
  it('gives up at the per-check limit on a port that never answers', async () => {
    expect(await tryConnect('127.0.0.1', port, 150)).toEqual({
      ok: false,
      detail: `127.0.0.1:${port} no answer within 150 ms`,
    });
  });

  it('stops when the loop cuts the check short', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    expect(await tryConnect('127.0.0.1', port, 30_000, ac.signal)).toEqual({
      ok: false,
      detail: `127.0.0.1:${port} no answer (check cut short)`,
    });
  });

  it('does not connect once the loop has stopped', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await tryConnect('127.0.0.1', port, 1000, ac.signal)).toEqual({
      ok: false,
      detail: `127.0.0.1:${port} not checked (aborted)`,
    });
  });

  it('puts an IPv6 address in brackets', async () => {
    const r = await tryConnect('::1', 1, 2000);
    expect(r.ok).toBe(false);
    expect(r.detail.startsWith('[::1]:1 ')).toBe(true);
  });
});

describe('tcpPortCheck over many hosts', () => {
  const via = (answers: Record<string, CheckResult>, asked: string[] = []): ProbeTransport => ({
    where: 'probe pod',
    http: () => Promise.reject(new Error('not used')),
    tcp: (host) => {
      asked.push(host);
      return Promise.resolve(answers[host]);
    },
  });
  const bad = (h: string): CheckResult => ({ ok: false, detail: `${h}:80 ECONNREFUSED` });
  const good = (h: string): CheckResult => ({ ok: true, detail: `${h}:80 open` });

  it('checks each host once, and 127.0.0.1 when none is given', async () => {
    const asked: string[] = [];
    const c = tcpPortCheck({
      hosts: ['a', 'b', 'a'],
      port: 80,
      transport: via({ a: good('a'), b: good('b') }, asked),
    });
    expect(c.kind).toBe('tcp_port');
    expect(c.describe()).toBe('tcp_port a:80,b:80');
    expect(await c.check(signal(), 1000)).toEqual({ ok: true, detail: '2 hosts open' });
    expect(asked.sort()).toEqual(['a', 'b']);
    const d = tcpPortCheck({ hosts: [], port: 80, transport: via({ '127.0.0.1': good('127.0.0.1') }) });
    expect(d.describe()).toBe('tcp_port 127.0.0.1:80');
    expect(await d.check(signal(), 1000)).toEqual({ ok: true, detail: '127.0.0.1:80 open' });
  });

  it('shows the first three hosts that failed, then how many more', async () => {
    const hosts = ['h1', 'h2', 'h3', 'h4', 'h5', 'ok'];
    const answers = Object.fromEntries(hosts.map((h) => [h, h === 'ok' ? good(h) : bad(h)]));
    expect(await tcpPortCheck({ hosts, port: 80, transport: via(answers) }).check(signal(), 1000)).toEqual({
      ok: false,
      detail: 'h1:80 ECONNREFUSED; h2:80 ECONNREFUSED; h3:80 ECONNREFUSED; … 2 more',
    });
    const three = ['h1', 'h2', 'h3'];
    expect(
      await tcpPortCheck({ hosts: three, port: 80, transport: via(answers) }).check(signal(), 1000),
    ).toEqual({ ok: false, detail: 'h1:80 ECONNREFUSED; h2:80 ECONNREFUSED; h3:80 ECONNREFUSED' });
  });
});
