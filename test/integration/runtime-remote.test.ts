/**
 * The orchestrator through every remote path, on the test-only remote backend (a fake engine at
 * the protocol boundary, real processes): steps that wait in a queue, remote ids that arrive late,
 * a status call that times out, a launch that fails after the engine accepted it, a handle whose
 * status the engine loses, and a queued allocation with progress.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/cli/run-execute.js';
import { eventTime, type RunEvent } from '../../src/events/events.js';
import { readHandleLedger } from '../../src/events/handle-ledger.js';
import { FakeEngine, RemoteBackend, type Faults } from '../helpers/remote-backend.js';
import { buildPlan, type SimpleTask } from './runtime-plan.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-remote-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

async function run(
  tasks: SimpleTask[],
  faults: Faults,
  {
    timeoutS,
    ...extra
  }: { pollTimeoutMs?: number; lostAfter?: number; signal?: AbortSignal; timeoutS?: number } = {},
) {
  const runDir = join(root, `wf-${++n}`);
  const engine = new FakeEngine(faults);
  const events: RunEvent[] = [];
  const plan = buildPlan(runDir, tasks);
  if (timeoutS) plan.workflowTimeoutS = timeoutS;
  const r = await executePlan(plan, {
    cwd: root,
    onEvent: (e) => events.push(e),
    backendFactories: { local: (b, ctx) => new RemoteBackend(engine, b.name, ctx.runId) },
    graceMs: 1000,
    ...extra,
  });
  const of = (task: string) => events.filter((e) => 'task' in e && e.task === task).map((e) => e.type);
  return { r, runDir, engine, events, of };
}

describe('orchestrator on a remote engine', () => {
  it('queued steps are SUBMITTED before RUNNING; late remote ids reach the ledger; status is batched', async () => {
    const tasks = ['a', 'b', 'c', 'd', 'e'].map((name) => ({
      name,
      script: `sleep 0.2; echo done-${name}`,
    }));
    const { r, runDir, engine, events, of } = await run(tasks, {
      queueMs: 300,
      idDelayMs: 150,
      latencyMs: 5,
    });
    expect(r.exitCode).toBe(0);
    for (const t of ['a', 'e']) {
      const seq = of(t);
      expect(seq.indexOf('task_submitted')).toBeLessThan(seq.indexOf('task_started'));
      expect(seq).toContain('task_handle');
      expect(readFileSync(join(runDir, t, `${t}.log`), 'utf8')).toBe(`done-${t}\n`);
    }
    const handles = events.filter((e) => e.type === 'task_handle');
    expect(handles.every((e) => e.type === 'task_handle' && /^job-\d+$/.test(e.handle.remoteIds[0]))).toBe(
      true,
    );
    const ledger = readHandleLedger(join(runDir, 'handles.jsonl'));
    expect(ledger.all).toHaveLength(5);
    expect(ledger.open).toHaveLength(0);
    expect(ledger.all.every((h) => /^job-\d+$/.test(h.remoteIds[0]))).toBe(true);
    const text = readFileSync(join(runDir, 'handles.jsonl'), 'utf8');
    expect(text).toContain('"state":"SUBMITTED"');
    expect(Math.max(...engine.statusBatches)).toBeGreaterThanOrEqual(2);
    expect(engine.calls.release).toBe(1);
  });

  it("task times are the engine's, not the moments a slow status call saw them", async () => {
    // every status call takes 400 ms: the driver sees starts and ends late, a 0.3 s job maybe
    // only once it has ended
    const { r, engine, events } = await run(
      [
        { name: 'two', script: 'sleep 2' },
        { name: 'short', script: 'sleep 0.3' },
      ],
      { latencyMs: 400 },
    );
    expect(r.exitCode).toBe(0);
    for (const task of ['two', 'short']) {
      const job = [...engine.jobs.values()].find((j) => j.task === task)!;
      const started = events.find((e) => e.type === 'task_started' && e.task === task);
      const finished = events.find((e) => e.type === 'task_finished' && e.task === task);
      expect(started?.type === 'task_started' && started.at, task).toBe(job.startedAt);
      expect(finished?.type === 'task_finished' && finished.at, task).toBe(job.endedAt);
      // the observation is kept beside it, never earlier than the engine's time
      expect(started!.t, task).toBeGreaterThanOrEqual(job.startedAt!);
      expect(finished!.t, task).toBeGreaterThanOrEqual(job.endedAt!);
      expect(eventTime(finished!) - eventTime(started!), task).toBe(job.endedAt! - job.startedAt!);
    }
  });

  it('a status call that times out is retried; the run completes', async () => {
    const { r, events } = await run(
      [{ name: 'a', script: 'sleep 0.3' }],
      { hangStatus: 1 },
      // the hung call never answers; the bound stays well above a loaded machine's slow answers
      { pollTimeoutMs: 2_000 },
    );
    expect(r.exitCode).toBe(0);
    const warn = events.find((e) => e.type === 'log' && e.message.includes('status call timed out'));
    expect(warn).toBeDefined();
  }, 120_000);

  it('a launch that fails after submit fails the task with the engine reason', async () => {
    const { r, events } = await run(
      [
        { name: 'bad', script: 'true' },
        { name: 'after', script: 'true', dependsOn: ['bad'] },
      ],
      { queueMs: 50, failAfterSubmit: ['bad'] },
    );
    expect(r.exitCode).toBe(1);
    const fin = events.find((e) => e.type === 'task_finished' && e.task === 'bad');
    expect(fin).toMatchObject({ status: 'FAILED' });
    expect(fin && 'reason' in fin ? fin.reason : '').toContain('image pull failed');
    expect(events.find((e) => e.type === 'task_finished' && e.task === 'after')).toMatchObject({
      status: 'CANCELLED',
    });
  });

  it('a handle whose status the engine loses fails with that reason and is stopped', async () => {
    const { r, events, engine } = await run(
      [{ name: 'ghost', script: 'exec sleep 30' }],
      { lostStatus: ['ghost'] },
      { lostAfter: 3 },
    );
    expect(r.exitCode).toBe(1);
    const fin = events.find((e) => e.type === 'task_finished' && e.task === 'ghost');
    expect(fin && 'reason' in fin ? fin.reason : '').toContain('status lost');
    expect(engine.calls.cancel).toBeGreaterThanOrEqual(1);
  });

  it('a queued allocation reports progress before the plan runs', async () => {
    const { r, events } = await run([{ name: 'a', script: 'true' }], { allocateMs: 200 });
    expect(r.exitCode).toBe(0);
    const alloc = events
      .filter((e) => e.type === 'backend_allocation')
      .map((e) => (e.type === 'backend_allocation' ? e.phase : ''));
    expect(alloc[0]).toBe('waiting');
    expect(alloc).toContain('allocated');
    expect(alloc.at(-1)).toBe('released');
    const first = (type: string) => events.findIndex((e) => e.type === type);
    expect(first('backend_allocation')).toBeLessThan(first('run_plan'));
  });

  it('a run cancelled while its allocation waits in the queue ends at once, CANCELLED, released', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const t0 = Date.now();
    const { r, events, engine } = await run(
      [{ name: 'a', script: 'true' }],
      { allocateMs: 60_000 },
      { signal: ac.signal },
    );
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r).toMatchObject({ status: 'CANCELLED', exitCode: 130 });
    expect(events.some((e) => e.type === 'task_started')).toBe(false);
    expect(engine.calls.submit).toBe(0);
    expect(events.some((e) => e.type === 'backend_allocation' && e.phase === 'failed')).toBe(true);
  });

  it('workflow.timeout passing while the allocation waits in the queue ends the run FAILED, saying why', async () => {
    const t0 = Date.now();
    const { r, events, engine } = await run(
      [{ name: 'a', script: 'true' }],
      { allocateMs: 60_000 },
      { timeoutS: 1 },
    );
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(r).toMatchObject({ status: 'FAILED', exitCode: 1 });
    expect(r.message).toMatch(
      /^Workflow 'wf' stopped: workflow\.timeout \(.+\) reached; 1 task\(s\) cancelled \(a\)$/,
    );
    expect(events.some((e) => e.type === 'task_started')).toBe(false);
    expect(engine.calls.submit).toBe(0);
    const errors = events.flatMap((e) => (e.type === 'log' && e.level === 'error' ? [e.message] : []));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/workflow\.timeout .* reached: stopping every task/);
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', status: 'FAILED' });
  });
});
