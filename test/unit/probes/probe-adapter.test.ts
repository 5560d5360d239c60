import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlannedProbe } from '../../../src/plan/types.js';
import { tcpHosts } from '../../../src/probes/kinds/tcp.js';
import { createProbeCheck, createProbeDriver, eachCheckMs } from '../../../src/probes/probe-adapter.js';
import type { CheckResult as Outcome } from '../../../src/probes/types.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-pa-'));
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

const probe = (p: Partial<PlannedProbe>): PlannedProbe =>
  ({
    role: 'readiness',
    kind: 'tcp_port',
    host: '127.0.0.1',
    hosts: ['127.0.0.1'],
    delayS: 0,
    timeoutS: 1200,
    eachCheckTimeoutS: 30,
    intervalS: 0.05,
    successThreshold: 1,
    failureThreshold: 3,
    ...p,
  }) as PlannedProbe; // a hand-made probe: the overrides may name any kind

function events() {
  const checks: Outcome[] = [];
  const triggers: Outcome[] = [];
  const deadlines: Array<{ waitedMs: number; last?: Outcome }> = [];
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  return {
    checks,
    triggers,
    deadlines,
    settled,
    ev: {
      onCheck: (r: Outcome) => checks.push(r),
      onTrigger: (r: Outcome) => {
        triggers.push(r);
        settle();
      },
      onDeadline: (waitedMs: number, last: Outcome | undefined) => {
        deadlines.push({ waitedMs, last });
        settle();
      },
    },
  };
}

const ctx = (logPath = join(dir, 'none.log')) => ({
  task: { name: 'svc', env: {}, outputDir: dir },
  logPath,
  startedAt: Date.now(),
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('ProbeAdapter', () => {
  it('maps planned probes to checks', () => {
    expect(createProbeCheck(probe({ port: 80 }), ctx('')).describe()).toBe('tcp_port 127.0.0.1:80');
    expect(tcpHosts({ onNode: 'each', hosts: ['10.0.0.1', '10.0.0.2'], host: '10.0.0.1' })).toEqual([
      '10.0.0.1',
      '10.0.0.2',
    ]);
    expect(tcpHosts({ onNode: 'first', hosts: ['10.0.0.1', '10.0.0.2'] })).toEqual(['10.0.0.1']);
    expect(createProbeCheck(probe({ kind: 'http_post', url: 'http://x/' }), ctx('')).describe()).toBe(
      'http_post http://x/',
    );
    expect(
      createProbeCheck(probe({ kind: 'log_watch', pattern: 'up', logTask: 'srv' }), ctx('/l')).describe(),
    ).toBe('log_watch "up" in srv');
  });

  it('reports checks, then the trigger once the port opens (readiness)', async () => {
    const port = await freePort();
    const e = events();
    createProbeDriver().start(probe({ port }), ctx(), e.ev);
    await new Promise((r) => setTimeout(r, 120));
    const s = createServer((c) => c.destroy());
    servers.push(s);
    await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
    await e.settled;
    expect(e.checks.length).toBeGreaterThanOrEqual(2);
    expect(e.checks.every((c) => !c.ok)).toBe(true);
    expect(e.triggers).toEqual([{ ok: true, detail: `127.0.0.1:${port} open` }]);
    expect(e.deadlines).toEqual([]);
  });

  it('reports the readiness deadline', async () => {
    const port = await freePort();
    const e = events();
    createProbeDriver().start(probe({ port, timeoutS: 0.2 }), ctx(), e.ev);
    await e.settled;
    expect(e.triggers).toEqual([]);
    expect(e.deadlines).toHaveLength(1);
    expect(e.deadlines[0].waitedMs).toBeGreaterThanOrEqual(199);
    expect(e.deadlines[0].last?.detail).toContain('ECONNREFUSED');
  });

  it('fires a failure probe after failure_threshold consecutive detections, and has no deadline', async () => {
    const log = join(dir, 'fail.log');
    writeFileSync(log, 'CUDA error: out of memory\n');
    const e = events();
    const p = probe({
      role: 'failure',
      kind: 'log_watch',
      pattern: 'out of memory',
      failureThreshold: 3,
      timeoutS: 0.01,
    });
    createProbeDriver().start(p, ctx(log), e.ev);
    await e.settled;
    expect(e.checks).toHaveLength(2);
    expect(e.triggers).toHaveLength(1);
    expect(e.triggers[0].detail).toBe('1/1 matches; last: CUDA error: out of memory');
  });

  it('stop() ends the loop without further events', async () => {
    const port = await freePort();
    const e = events();
    const loop = createProbeDriver().start(probe({ port, delayS: 0.1 }), ctx(), e.ev);
    loop.stop();
    await new Promise((r) => setTimeout(r, 250));
    expect([e.checks, e.triggers, e.deadlines]).toEqual([[], [], []]);
  });

  it('checkOnce continues the loop check of the same probe (log_watch count)', async () => {
    const log = join(dir, 'once.log');
    writeFileSync(log, 'shard loaded\n');
    const driver = createProbeDriver();
    const p = probe({ kind: 'log_watch', pattern: 'shard loaded', matchCount: 2, intervalS: 10 });
    const e = events();
    const loop = driver.start(p, ctx(log), e.ev);
    const end = Date.now() + 2000;
    while (e.checks.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    loop.stop();
    appendFileSync(log, 'shard loaded\n');
    expect(await driver.checkOnce(p, ctx(log))).toEqual({
      ok: true,
      detail: '2/2 matches; last: shard loaded',
    });
  });

  it('checkOnce on another log starts a count of its own', async () => {
    const first = join(dir, 'first.log');
    const other = join(dir, 'other.log');
    writeFileSync(first, 'ok\nok\n');
    writeFileSync(other, 'ok\n');
    const driver = createProbeDriver();
    const p = probe({ kind: 'log_watch', pattern: 'ok', matchCount: 2, intervalS: 10 });
    const e = events();
    const loop = driver.start(p, ctx(first), e.ev);
    await e.settled;
    loop.stop();
    expect(await driver.checkOnce(p, ctx(other))).toEqual({ ok: false, detail: '1/2 matches; last: ok' });
  });

  it('waits delay seconds before the first check and interval seconds between checks', async () => {
    const log = join(dir, 'timing.log');
    writeFileSync(log, 'boom\n');
    const t0 = Date.now();
    const e = events();
    const p = probe({
      role: 'failure',
      kind: 'log_watch',
      pattern: 'boom',
      delayS: 0.2,
      intervalS: 0.3,
      failureThreshold: 2,
    });
    createProbeDriver().start(p, { ...ctx(log), startedAt: t0 }, e.ev);
    await e.settled;
    // the first check at 0.2 s, the second (the trigger) 0.3 s later: never sooner
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    expect(e.checks).toHaveLength(1);
    expect(e.triggers).toHaveLength(1);
  });
});

describe('eachCheckMs', () => {
  it('is each_check_timeout in ms, the 30 s default when 0 or less', () => {
    expect(eachCheckMs(probe({ eachCheckTimeoutS: 2.5 }))).toBe(2500);
    expect(eachCheckMs(probe({ eachCheckTimeoutS: 0 }))).toBe(30_000);
    expect(eachCheckMs(probe({ eachCheckTimeoutS: -1 }))).toBe(30_000);
  });
});
