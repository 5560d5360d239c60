/**
 * Failure paths with real processes: a task SIGKILLed mid-run, a service whose port never
 * opens (readiness deadline), a failure probe firing while a benchmark runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/cli/run-execute.js';
import type { RunEvent } from '../../src/events/events.js';
import { processesWith } from '../conformance/backend.conformance.js';
import { buildPlan, type SimpleTask } from './runtime-plan.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-rtf-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const marker = () => `${process.pid}${++n}${Math.floor(Math.random() * 1e5)}`;

async function run(tasks: SimpleTask[], onEvent?: (e: RunEvent) => void) {
  const runDir = join(root, `wf-${++n}`);
  const events: RunEvent[] = [];
  const r = await executePlan(buildPlan(runDir, tasks), {
    cwd: root,
    graceMs: 1000,
    onEvent: (e) => {
      events.push(e);
      onEvent?.(e);
    },
  });
  const finished = (task: string) =>
    events.find((e) => e.type === 'task_finished' && e.task === task) as Extract<
      RunEvent,
      { type: 'task_finished' }
    >;
  return { r, runDir, events, finished, read: (p: string) => readFileSync(join(runDir, p), 'utf8') };
}

describe('runtime failures (real processes)', () => {
  it('a task SIGKILLed mid-run fails with the signal; the rest is cancelled and nothing is left', async () => {
    const m = marker();
    const runDir = join(root, `wf-${++n}`);
    const events: RunEvent[] = [];
    const running = executePlan(
      buildPlan(runDir, [
        { name: 'victim', script: 'echo $$ > "$SFLOW_TASK_OUTPUT_DIR/pid"; sleep 30' },
        { name: 'bystander', script: `sleep 9${m}` },
        { name: 'after', dependsOn: ['victim'], script: 'echo never' },
      ]),
      { cwd: root, graceMs: 1000, onEvent: (e) => events.push(e) },
    );
    const pidFile = join(runDir, 'victim', 'pid');
    const end = Date.now() + 10_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
      if (Date.now() > end) throw new Error('victim never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    const r = await running;
    expect(r.status).toBe('FAILED');
    expect(Object.fromEntries(r.tasks)).toEqual({
      victim: 'FAILED',
      bystander: 'CANCELLED',
      after: 'CANCELLED',
    });
    const fin = events.find((e) => e.type === 'task_finished' && e.task === 'victim');
    expect(fin).toMatchObject({
      exitCode: null,
      signal: 'SIGKILL',
      reason: 'process exited with error (exit=signal SIGKILL)',
    });
    expect(readFileSync(join(runDir, 'sflow_summary.log'), 'utf8')).toMatch(
      /victim +FAILED +1 +[\d.]+s +SIGKILL/,
    );
    expect(processesWith(`9${m}`)).toEqual([]);
  });

  it('a service whose port never opens fails at the readiness deadline; dependents are cancelled', async () => {
    const m = marker();
    const { r, finished, events } = await run([
      {
        name: 'api',
        script: `echo "binding elsewhere"; sleep 8${m}`,
        readiness: [{ kind: 'tcp_port', port: 1, host: '127.0.0.1', timeoutS: 1, intervalS: 0.1 }],
      },
      { name: 'client', dependsOn: ['api'], script: 'echo never' },
    ]);
    expect(Object.fromEntries(r.tasks)).toEqual({ api: 'FAILED', client: 'CANCELLED' });
    // the deadline ended the wait, not the task: a bounded number of checks (1 s at 0.1 s
    // intervals), then sflow stopped the still-running service
    const checks = events.filter(
      (e) => e.type === 'probe_result' && e.task === 'api' && e.role === 'readiness',
    );
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.length).toBeLessThanOrEqual(12);
    expect(events.some((e) => e.type === 'task_stopped' && e.task === 'api')).toBe(true);
    expect(finished('api').reason).toMatch(
      /^readiness probe tcp_port 127\.0\.0\.1:1 not ready after 1\.\ds \(last check: 127\.0\.0\.1:1 ECONNREFUSED\)/,
    );
    expect(
      events.some((e) => e.type === 'fail_fast' && e.message.includes('readiness deadline exceeded: api')),
    ).toBe(true);
    expect(r.message).toBe("Workflow 'wf' failed: 1 task(s) failed (api)");
    expect(processesWith(`8${m}`)).toEqual([]);
  });

  it('a failure probe fires while a benchmark runs: server FAILED, bench and others CANCELLED, all stopped', async () => {
    const m = marker();
    const { r, finished, read } = await run([
      {
        name: 'server',
        script: `echo "server starting"; sleep 0.5; echo "Traceback (most recent call last):"; sleep 7${m}`,
        readiness: [{ kind: 'log_watch', pattern: 'server starting', intervalS: 0.1 }],
        failure: [{ kind: 'log_watch', pattern: 'Traceback (most recent call last)', intervalS: 0.1 }],
      },
      { name: 'bench', dependsOn: ['server'], script: `sleep 7${m}` },
      { name: 'independent', script: `sleep 7${m} & sleep 7${m}` },
      { name: 'never_runs', dependsOn: ['bench'], script: 'echo must not print' },
    ]);
    expect(r.exitCode).toBe(1);
    expect(Object.fromEntries(r.tasks)).toEqual({
      server: 'FAILED',
      bench: 'CANCELLED',
      independent: 'CANCELLED',
      never_runs: 'CANCELLED',
    });
    expect(finished('server').reason).toMatch(/^failure probe terminated: .*still running/);
    expect(read('sflow.log')).toContain(
      'Fail-fast: failure probe terminated: server. Cancelling remaining tasks.',
    );
    expect(read('never_runs/never_runs.log')).toBe('');
    expect(processesWith(`7${m}`)).toEqual([]);
  });

  it('a readiness-probed task that exits 0 before READY is FAILED', async () => {
    const { r, finished } = await run([
      { name: 'svc', script: 'echo quitting', readiness: [{ kind: 'tcp_port', port: 1, intervalS: 0.1 }] },
      { name: 'dep', dependsOn: ['svc'], script: 'echo never' },
    ]);
    expect(Object.fromEntries(r.tasks)).toEqual({ svc: 'FAILED', dep: 'CANCELLED' });
    expect(finished('svc').reason).toBe('service exited before readiness (exit=0)');
  });

  it('services are stopped at the end and the run succeeds; the dependent starts right after READY', async () => {
    const m = marker();
    const { r, read, events } = await run([
      {
        name: 'svc',
        script: `sleep 0.3; echo up; sleep 6${m}`,
        readiness: [{ kind: 'log_watch', pattern: 'up', intervalS: 0.05 }],
      },
      { name: 'client', dependsOn: ['svc'], script: 'echo client ran' },
    ]);
    expect(r).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(Object.fromEntries(r.tasks)).toEqual({ svc: 'READY', client: 'COMPLETED' });
    // decided at once, no tick: the very next event after READY submits the client
    const ready = events.findIndex((e) => e.type === 'task_ready' && e.task === 'svc');
    expect(events[ready + 1]).toMatchObject({ type: 'task_submitted', task: 'client' });
    const started = events.findIndex((e) => e.type === 'task_started' && e.task === 'client');
    expect(started).toBeGreaterThan(ready);
    expect(read('client/client.log')).toBe('client ran\n');
    expect(processesWith(`6${m}`)).toEqual([]);
  });
});
