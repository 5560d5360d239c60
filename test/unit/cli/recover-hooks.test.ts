/**
 * `sflow recover`'s run-level hooks: every backend kind's `liveDriver` is asked before anything is
 * touched, each open handle goes to its kind's backend `recover`, then every kind's `recoverRun`
 * runs with the command's options and its lines reach the report and the run's ledgers.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/backends/backend.js';
import type { BackendKind, RunRecoveryOptions } from '../../../src/backends/kind.js';
import { HANDLE_VERSION, type TaskHandle } from '../../../src/events/handle.js';
import { describeRecovery, recoverRun } from '../../../src/cli/recover-runs.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-recover-hooks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let seq = 0;
function lostRun(): { runDir: string; handle: TaskHandle } {
  const runDir = join(root, `run${++seq}`);
  const handle: TaskHandle = {
    v: HANDLE_VERSION,
    backend: 'farm',
    type: 'fake',
    runId: `r${seq}`,
    task: 'serve',
    attempt: 1,
    state: 'RUNNING',
    nodes: ['n0'],
    engine: { kind: 'fake', job: 'job-7' },
    remoteIds: ['job-7'],
    submittedAt: new Date(0).toISOString(),
    logPath: join(runDir, 'serve', 'serve.log'),
  };
  const events = [
    { type: 'run_started', workflow: 'w', runId: handle.runId, runDir, tasks: ['serve', 'client'] },
    { type: 'task_started', task: 'serve', attempt: 1, handle },
  ].map((e, i) => JSON.stringify({ ...e, ts: new Date(i).toISOString(), seq: i }));
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'events.jsonl'), events.join('\n') + '\n');
  writeFileSync(
    join(runDir, 'handles.jsonl'),
    JSON.stringify({ v: HANDLE_VERSION, t: 0, op: 'launched', handle }) + '\n',
  );
  return { runDir, handle };
}

interface Calls {
  recovered: TaskHandle[];
  runLevel: Array<{ runDir: string; o: RunRecoveryOptions }>;
  asked: string[];
}

function fakeKind(
  type: string,
  calls: Calls,
  o: { live?: string; fail?: boolean; create?: boolean } = {},
): BackendKind {
  const backend = {
    recover: (h: TaskHandle) => {
      calls.recovered.push(h);
      return Promise.resolve({ found: true, stop: { gone: true }, detail: `stopped ${h.remoteIds[0]}` });
    },
  } as unknown as Backend;
  return {
    type,
    capabilities: {},
    ...(o.create !== false ? { create: () => backend } : {}),
    liveDriver: (runDir: string) => {
      calls.asked.push(runDir);
      return o.live;
    },
    recoverRun: (runDir: string, ro: RunRecoveryOptions) => {
      calls.runLevel.push({ runDir, o: ro });
      if (o.fail) return Promise.reject(new Error('API unreachable'));
      return Promise.resolve([`deleted 2 reservation pods of ${runDir.split('/').pop()}`]);
    },
  } as unknown as BackendKind;
}

const newCalls = (): Calls => ({ recovered: [], runLevel: [], asked: [] });

describe('sflow recover: backend kind hooks', () => {
  it('recovers each open handle through its kind, then calls every kind’s recoverRun with the options', async () => {
    const { runDir, handle } = lostRun();
    const a = newCalls();
    const b = newCalls();
    const options = { kubeconfig: '/tmp/kc', kubeContext: 'lab', graceSeconds: '1' };
    const report = await recoverRun(runDir, {
      kinds: [fakeKind('fake', a), fakeKind('other', b, { create: false })],
      options,
      graceMs: 100,
    });
    expect(a.asked).toEqual([runDir]);
    expect(b.asked).toEqual([runDir]);
    expect(a.recovered.map((h) => h.engine)).toEqual([handle.engine]);
    expect(b.recovered).toEqual([]);
    for (const c of [a, b]) {
      expect(c.runLevel).toHaveLength(1);
      expect(c.runLevel[0]?.runDir).toBe(runDir);
      expect(c.runLevel[0]?.o.options).toBe(options);
      expect(c.runLevel[0]?.o.signal).toBeInstanceOf(AbortSignal);
    }
    expect(report.failed).toBe(false);
    expect(report.marked).toBe(true);
    const lines = describeRecovery(report).join('\n');
    expect(lines).toContain('serve#1: stopped job-7');
    expect(lines).toContain('fake: deleted 2 reservation pods of run1');
    expect(lines).toContain('other: deleted 2 reservation pods of run1');
    const events = readFileSync(join(runDir, 'events.jsonl'), 'utf8');
    expect(events).toContain('recovered fake: deleted 2 reservation pods');
    expect(events).toMatch(/"type":"run_finished".*lost driver/);
    expect(readFileSync(join(runDir, 'handles.jsonl'), 'utf8')).toContain('"op":"ended"');
  });

  it('touches nothing while a kind says a driver of the run still runs', async () => {
    const { runDir } = lostRun();
    const before = readFileSync(join(runDir, 'events.jsonl'), 'utf8');
    const a = newCalls();
    const b = newCalls();
    const report = await recoverRun(runDir, {
      kinds: [fakeKind('fake', a), fakeKind('slurmish', b, { live: 'batch job 12 on c1' })],
    });
    expect(report.liveDriver).toBe('slurmish: batch job 12 on c1');
    expect(a.recovered).toEqual([]);
    expect(a.runLevel).toEqual([]);
    expect(b.runLevel).toEqual([]);
    expect(report.marked).toBe(false);
    expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8')).toBe(before);
    expect(describeRecovery(report)[0]).toContain('a driver of it still runs (slurmish: batch job 12 on c1)');
  });

  it('a failing recoverRun is reported and fails the recovery, the others still run', async () => {
    const { runDir } = lostRun();
    const a = newCalls();
    const b = newCalls();
    const report = await recoverRun(runDir, {
      kinds: [fakeKind('fake', a, { fail: true }), fakeKind('other', b, { create: false })],
    });
    expect(report.failed).toBe(true);
    expect(report.problems.join('\n')).toContain('fake: run-level recovery failed: API unreachable');
    expect(b.runLevel).toHaveLength(1);
    expect(report.marked).toBe(true);
  });

  it('a run that ended normally has nothing to recover, and says so', async () => {
    const { runDir } = lostRun();
    writeFileSync(join(runDir, 'handles.jsonl'), '');
    const end = { type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'ok', t: 9 };
    writeFileSync(
      join(runDir, 'events.jsonl'),
      readFileSync(join(runDir, 'events.jsonl'), 'utf8') + JSON.stringify(end) + '\n',
    );
    const report = await recoverRun(runDir, { kinds: [] });
    expect(report.marked).toBe(false);
    expect(describeRecovery(report)).toEqual([
      `run ${runDir}: nothing left to recover (its events already end with the run's end)`,
    ]);
  });
});
