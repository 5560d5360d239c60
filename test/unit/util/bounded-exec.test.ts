import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  boundedExec,
  isNotableCall,
  onExternalCall,
  onSlowExternalCall,
  type ExternalCallTrace,
  type SlowCallWarning,
} from '../../../src/util/bounded-exec.js';
import { summarizeExternalCalls } from '../../../src/util/external-health.js';
import { redactArgs } from '../../../src/util/redact.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-bx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows: ExternalCallTrace[] = [];
const warnings: SlowCallWarning[] = [];
const offs = [onExternalCall((r) => rows.push(r)), onSlowExternalCall((w) => warnings.push(w))];
afterEach(() => {
  rows.length = 0;
  warnings.length = 0;
});
afterAll(() => offs.forEach((off) => off()));

describe('boundedExec', () => {
  it('returns exit code and output, and traces the call', async () => {
    const r = await boundedExec('bash', ['-c', 'echo out; echo err >&2; exit 3'], { timeoutMs: 5000 });
    expect(r).toMatchObject({
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      ok: false,
      timedOut: false,
      attempts: 1,
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      tool: 'bash',
      exitCode: 3,
      ok: false,
      attempts: 1,
      slow: false,
      stderrTail: 'err\n',
    });
    expect(isNotableCall(rows[0])).toBe(true);
  });

  it('passes stdin, env and cwd, without a shell', async () => {
    const r = await boundedExec('bash', ['-c', 'cat; echo " $FOO $PWD"', '$(touch no-shell)'], {
      timeoutMs: 5000,
      input: 'hello',
      env: { FOO: 'bar' },
      cwd: dir,
    });
    expect(r.ok).toBe(true);
    expect(r.stdout).toBe(`hello bar ${dir}\n`);
    expect(isNotableCall(rows[0])).toBe(false);
  });

  it('kills a call that outlives its timeout, not before it', async () => {
    const t0 = Date.now();
    const r = await boundedExec('sleep', ['600'], { timeoutMs: 200 });
    const took = Date.now() - t0;
    expect(r.timedOut).toBe(true);
    expect(r.ok).toBe(false);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGTERM'); // killed: sleep 600 could not have ended on its own
    expect(took).toBeGreaterThanOrEqual(190);
    expect(rows[0]).toMatchObject({ tool: 'sleep', timedOut: true, ok: false });
  });

  it('SIGKILLs a call that ignores SIGTERM after the kill grace', async () => {
    const r = await boundedExec('bash', ['-c', "trap '' TERM; exec sleep 600"], {
      timeoutMs: 150,
      killGraceMs: 200,
    });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
  });

  it('retries when told it is safe, with backoff, and counts attempts', async () => {
    const counter = join(dir, 'count');
    const script = `c=$(cat "${counter}" 2>/dev/null || echo 0); echo $((c+1)) > "${counter}"; [ "$c" -ge 2 ]`;
    const t0 = Date.now();
    const r = await boundedExec('bash', ['-c', script], { timeoutMs: 5000, retries: 5, retryDelayMs: 20 });
    expect(r).toMatchObject({ ok: true, exitCode: 0, attempts: 3 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(60); // 20 + 40 ms of waiting
    expect(rows).toHaveLength(1); // one trace row per call, not per attempt
    expect(rows[0]).toMatchObject({ attempts: 3, ok: true });
  });

  it('does not retry by default, nor when retryOn refuses', async () => {
    expect((await boundedExec('false', [], { timeoutMs: 5000 })).attempts).toBe(1);
    const seen: number[] = [];
    const r = await boundedExec('bash', ['-c', 'exit 7'], {
      timeoutMs: 5000,
      retries: 3,
      retryDelayMs: 1,
      retryOn: (o) => {
        seen.push(o.exitCode ?? -1);
        return o.exitCode !== 7;
      },
    });
    expect(r.attempts).toBe(1);
    expect(seen).toEqual([7]);
  });

  it('an expected answer is not retried and is traced as ok (expected), the outcome still says it failed', async () => {
    const r = await boundedExec('bash', ['-c', 'echo "Error: No such container: c1" >&2; exit 1'], {
      timeoutMs: 5000,
      retries: 3,
      retryDelayMs: 1,
      expected: (o) => /no such container/i.test(o.stderr),
    });
    expect(r).toMatchObject({ ok: false, exitCode: 1, attempts: 1 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ok: true, expected: true, exitCode: 1 });
    expect(isNotableCall(rows[0])).toBe(false);
    // anything else still fails, and is retried as before
    const other = await boundedExec('bash', ['-c', 'echo "Error: disk I/O" >&2; exit 1'], {
      timeoutMs: 5000,
      retries: 1,
      retryDelayMs: 1,
      expected: (o) => /no such container/i.test(o.stderr),
    });
    expect(other.attempts).toBe(2);
    expect(rows[1]).toMatchObject({ ok: false });
    expect(rows[1].expected).toBeUndefined();
  });

  it('reports a missing program without retrying it', async () => {
    const r = await boundedExec('no-such-tool-xyz', ['a'], { timeoutMs: 5000, retries: 3, retryDelayMs: 1 });
    expect(r).toMatchObject({ ok: false, exitCode: null, errorCode: 'ENOENT', attempts: 1 });
    expect(rows[0]).toMatchObject({ tool: 'no-such-tool-xyz', errorCode: 'ENOENT', ok: false });
  });

  it('warns live about a slow call and marks its trace row slow', async () => {
    // the call runs until the test lets it end (a file appears), so the warning must come
    // while it runs, however slowly this machine spawns
    const go = join(dir, 'go');
    let resolved = false;
    const call = boundedExec('bash', ['-c', `until [ -e "${go}" ]; do sleep 0.02; done`], {
      timeoutMs: 30_000,
      slowMs: 100,
    }).then((r) => {
      resolved = true;
      return r;
    });
    await vi.waitFor(() => expect(warnings).toHaveLength(1), { timeout: 10_000 });
    expect(resolved).toBe(false); // the warning came while the call still ran
    writeFileSync(go, '');
    expect(warnings[0]).toMatchObject({ tool: 'bash', attempt: 1 });
    expect(warnings[0].elapsedMs).toBeGreaterThanOrEqual(95);
    expect((await call).ok).toBe(true);
    expect(rows[0].slow).toBe(true);
    expect(isNotableCall(rows[0])).toBe(true);
  });

  it('redacts secret values in traced arguments', async () => {
    await boundedExec(
      'true',
      ['run', '-e', 'HF_TOKEN=abc', '--env=PW=xyz', '-eK=v', '-e', 'PLAIN', '--token', 't0k'],
      {
        timeoutMs: 5000,
      },
    );
    expect(rows[0].args).toEqual([
      'run',
      '-e',
      'HF_TOKEN=***',
      '--env=PW=***',
      '-eK=***',
      '-e',
      'PLAIN',
      '--token',
      '***',
    ]);
    expect(JSON.stringify(rows[0])).not.toMatch(/abc|xyz|t0k/);
  });

  it('stops when its AbortSignal fires', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    // neither the 10-minute timeout nor the sleep could end this call: only the signal
    const r = await boundedExec('sleep', ['600'], { timeoutMs: 600_000, retries: 3, signal: ac.signal });
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    expect(r.attempts).toBe(1);
  });
});

describe('redactArgs', () => {
  it('hides values of env assignments, exports, literals and secret flags', () => {
    expect(
      redactArgs([
        '--export=ALL,HF_TOKEN=abc,CUDA=1',
        '--from-literal=pw=s3',
        '--password=hunter2',
        '--api-key',
        'k',
        '-n',
        'ns',
      ]),
    ).toEqual([
      '--export=ALL,HF_TOKEN=***,CUDA=***',
      '--from-literal=pw=***',
      '--password=***',
      '--api-key',
      '***',
      '-n',
      'ns',
    ]);
  });
});

describe('summarizeExternalCalls', () => {
  it('computes per-tool health figures', () => {
    const row = (
      tool: string,
      durationMs: number,
      extra: Partial<ExternalCallTrace> = {},
    ): ExternalCallTrace => ({
      tool,
      args: [],
      exitCode: 0,
      signal: null,
      durationMs,
      timedOut: false,
      attempts: 1,
      ok: true,
      slow: durationMs > 5000,
      startedAt: new Date(0).toISOString(),
      ...extra,
    });
    const h = summarizeExternalCalls([
      row('squeue', 100),
      row('squeue', 6000),
      row('squeue', 300, { ok: false, exitCode: 1, attempts: 3 }),
      row('docker', 50, { ok: false, timedOut: true, exitCode: null }),
    ]);
    expect(h).toEqual([
      {
        tool: 'docker',
        calls: 1,
        failed: 1,
        timedOut: 1,
        slow: 0,
        retried: 0,
        totalMs: 50,
        maxMs: 50,
        p95Ms: 50,
      },
      {
        tool: 'squeue',
        calls: 3,
        failed: 1,
        timedOut: 0,
        slow: 1,
        retried: 1,
        totalMs: 6400,
        maxMs: 6000,
        p95Ms: 6000,
      },
    ]);
  });
});
