/** What `--resume` runs again, decided from a ledger (runtime/resume.ts), and the orchestrator's pre-settled tasks. */
import { describe, expect, it } from 'vitest';
import type { RunEvent, TaskStatus } from '../../../src/events/events.js';
import { driverState, foldEarlierRun, planResume, thisDriver } from '../../../src/runtime/resume.js';
import { Orchestrator, type RunEventInput } from '../../../src/runtime/orchestrator.js';
import { FakeBackend, FakeProbes, plan, task } from './fakes.js';

let t = 1_000;
const ev = (e: Record<string, unknown>): RunEvent => ({ t: t++, ...e }) as RunEvent;

/** A ledger: run_started, then each task ending as given after `attempts` attempts. */
function ledger(
  names: string[],
  ends: Record<string, { status: TaskStatus | 'never'; attempts?: number }>,
  finished = true,
): RunEvent[] {
  const out: RunEvent[] = [
    ev({ type: 'run_started', workflow: 'wf', runId: 'wf-1', runDir: '/x', tasks: names }),
  ];
  for (const n of names) {
    const end = ends[n] ?? { status: 'COMPLETED' };
    if (end.status === 'never') continue;
    const k = end.attempts ?? 1;
    for (let a = 1; a <= k; a++) {
      out.push(ev({ type: 'task_submitted', task: n, attempt: a }));
      out.push(ev({ type: 'task_started', task: n, attempt: a }));
      if (a < k)
        out.push(
          ev({
            type: 'task_retry',
            task: n,
            attempt: a,
            exitCode: 1,
            delayS: 0,
            nextAttempt: a + 1,
            total: k,
          }),
        );
    }
    if (end.status === 'READY') out.push(ev({ type: 'task_ready', task: n, attempt: k, probe: 'tcp' }));
    else if (end.status === 'COMPLETED' || end.status === 'FAILED' || end.status === 'CANCELLED')
      out.push(
        ev({
          type: 'task_finished',
          task: n,
          attempt: k,
          status: end.status,
          exitCode: end.status === 'COMPLETED' ? 0 : 1,
        }),
      );
  }
  if (finished) out.push(ev({ type: 'run_finished', status: 'FAILED', exitCode: 1, message: 'x' }));
  return out;
}

const shape = (name: string, dependsOn: string[] = [], service = false) => ({ name, dependsOn, service });

describe('planResume', () => {
  it('a 24-row sweep with 2 failed rows re-runs those 2 and what depends on them, nothing else', () => {
    const rows = Array.from({ length: 24 }, (_, i) => `bench_${i + 1}`);
    const tasks = [
      shape('prep'),
      ...rows.map((r) => shape(r, ['prep'])),
      shape('collect', rows),
      shape('other', ['prep']),
    ];
    const earlier = foldEarlierRun(
      ledger(
        tasks.map((x) => x.name),
        {
          bench_7: { status: 'FAILED', attempts: 2 },
          bench_19: { status: 'CANCELLED' },
          collect: { status: 'never' },
        },
      ),
    );
    const p = planResume(tasks, earlier);
    expect(p.rerun).toEqual([
      { task: 'bench_7', why: 'failed (attempt 2)' },
      { task: 'bench_19', why: 'cancelled (attempt 1)' },
      { task: 'collect', why: 'never started' },
    ]);
    expect(p.reused.size).toBe(24);
    expect(p.reused.get('bench_1')).toEqual({ attempt: 1, status: 'COMPLETED' });
    expect(p.attempts.get('bench_7')).toBe(2);
    expect(p.attempts.has('collect')).toBe(true);
    expect(p.session).toBe(2);
  });

  it('runs again everything downstream, a service a re-run task needs, and services upstream of that service', () => {
    // db (service) → api (service) → client_1, client_2 ; report depends on clients; seed is a plain upstream task
    const tasks = [
      shape('seed'),
      shape('db', ['seed'], true),
      shape('api', ['db'], true),
      shape('client_1', ['api']),
      shape('client_2', ['api']),
      shape('report', ['client_1', 'client_2']),
    ];
    // a driver killed mid-run: the services were READY, client_2 was still running
    const earlier = foldEarlierRun(
      ledger(
        tasks.map((x) => x.name),
        {
          db: { status: 'READY' },
          api: { status: 'READY' },
          client_2: { status: 'RUNNING' },
          report: { status: 'never' },
        },
        false,
      ),
    );
    expect(earlier.finished).toBe(false);
    const p = planResume(tasks, earlier);
    expect(p.rerun.map((r) => r.task)).toEqual(['db', 'api', 'client_2', 'report']);
    expect(p.rerun.find((r) => r.task === 'api')?.why).toBe('service needed by client_2');
    expect(p.rerun.find((r) => r.task === 'db')?.why).toBe('service needed by api');
    expect(p.rerun.find((r) => r.task === 'client_2')?.why).toContain('left RUNNING');
    expect([...p.reused.keys()]).toEqual(['seed', 'client_1']);
  });

  it('a service none of whose dependents runs again is reused', () => {
    const tasks = [shape('srv', [], true), shape('a', ['srv']), shape('b')];
    const earlier = foldEarlierRun(
      ledger(['srv', 'a', 'b'], { srv: { status: 'READY' }, b: { status: 'FAILED' } }),
    );
    const p = planResume(tasks, earlier);
    expect(p.rerun.map((r) => r.task)).toEqual(['b']);
    expect(p.reused.get('srv')).toEqual({ attempt: 1, status: 'READY' });
  });

  it('a task the earlier run did not have runs; sessions and reuse carry over a second resume', () => {
    const first = ledger(['a', 'b'], { b: { status: 'FAILED' } });
    const second = [
      ...first,
      ev({ type: 'run_started', workflow: 'wf', runId: 'wf-1', runDir: '/x', tasks: ['a', 'b'], session: 2 }),
      ev({ type: 'task_reused', task: 'a', attempt: 1, status: 'COMPLETED' }),
      ev({ type: 'task_submitted', task: 'b', attempt: 2 }),
      ev({ type: 'task_finished', task: 'b', attempt: 2, status: 'FAILED', exitCode: 1 }),
      ev({ type: 'run_finished', status: 'FAILED', exitCode: 1, message: 'x' }),
    ];
    const earlier = foldEarlierRun(second);
    expect(earlier.sessions).toBe(2);
    const p = planResume([shape('a'), shape('b'), shape('c', ['a'])], earlier);
    expect(p.rerun).toEqual([
      { task: 'b', why: 'failed (attempt 2)' },
      { task: 'c', why: 'not in the earlier run' },
    ]);
    expect(p.reused.get('a')).toEqual({ attempt: 1, status: 'COMPLETED' });
    expect(p.attempts.get('b')).toBe(2);
    expect(p.session).toBe(3);
  });

  it('driver liveness: this process is alive elsewhere-recorded, a dead pid is gone, another host is unknown', () => {
    const me = thisDriver(null);
    expect(driverState({ ...me, pid: process.ppid })).toBe('alive');
    expect(driverState({ ...me, pid: 2 ** 22 + 12345 })).toBe('gone');
    expect(driverState({ ...me, host: 'some-other-host.invalid' })).toBe('unknown');
    expect(driverState(undefined)).toBe('unknown');
  });
});

describe('orchestrator with pre-settled tasks', () => {
  it('reused tasks are announced, never launched, free their dependents; attempts continue, retries count afresh', async () => {
    const backend = new FakeBackend({
      a: { code: 0, ms: 1 },
      // attempts 1 and 2 were an earlier session's: this session's are 3 (fails) and 4
      b: [
        { code: 1, ms: 1 },
        { code: 1, ms: 1 },
        { code: 1, ms: 1 },
        { code: 0, ms: 1 },
      ],
      c: { code: 0, ms: 1 },
    });
    const events: RunEventInput[] = [];
    const orch = new Orchestrator({
      plan: plan([
        task('a'),
        task('b', { dependsOn: ['a'], retries: { count: 1, intervalS: 0, backoff: 1 } }),
        task('c', { dependsOn: ['b'] }),
      ]),
      backends: new Map([['local', backend]]),
      probes: new FakeProbes({}),
      emit: (e) => events.push(e),
      cwd: '/',
      graceMs: 100,
      resume: {
        reused: new Map([['a', { attempt: 1, status: 'COMPLETED' }]]),
        attempts: new Map([
          ['a', 1],
          ['b', 2],
        ]),
      },
    });
    const out = await orch.run();
    expect(Object.fromEntries(out.statuses)).toEqual({ a: 'COMPLETED', b: 'COMPLETED', c: 'COMPLETED' });
    expect(backend.launches.map((l) => `${l.task}#${l.attempt}`)).toEqual(['b#3', 'b#4', 'c#1']);
    expect(events[0]).toEqual({ type: 'task_reused', task: 'a', attempt: 1, status: 'COMPLETED' });
    const retry = events.find((e) => e.type === 'task_retry');
    expect(retry).toMatchObject({ task: 'b', attempt: 3, nextAttempt: 4, total: 4 });
    expect(events.some((e) => e.type === 'task_submitted' && e.task === 'a')).toBe(false);
  });
});
