/**
 * Backend-owned handle state (issue 26, deliverable 4): every registered backend kind declares its
 * engine state; `engineStateOf` narrows a handle's state with that kind's schema, refuses another
 * kind's or a malformed one with an error naming the attempt, and reads the engine-id strings of a
 * version-1 ledger through the kind's one legacy parse only.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HANDLE_VERSION, type EngineState, type TaskHandle } from '../../../src/backends/backend.js';
import { engineFields, engineStateOf, type HandleStateKind } from '../../../src/backends/handle-state.js';
import { BACKEND_KINDS } from '../../../src/backends/registry.js';
import { LocalBackend } from '../../../src/backends/local/local-backend.js';
import { membersOf } from '../../../src/backends/docker/members.js';
import { HandleLedger, readHandleLedger } from '../../../src/events/handle-ledger.js';
import { applyHandleStatus } from '../../../src/runtime/attempt-handles.js';
import { processStartTime } from '../../../src/util/process-liveness.js';
import { SflowError } from '../../../src/util/sflow-error.js';
import type { BackendType } from '../../../src/plan/types.js';
import { plannedBackend } from '../../helpers/backends.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-handle-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const who = { task: 'serve', attempt: 2, backend: 'b' };
/** a kind's handle state, found through the registry as a recovering driver finds it */
const stateKind = (type: BackendType): HandleStateKind<BackendType, EngineState & { kind: BackendType }> =>
  BACKEND_KINDS[type].handleState;
const parse = (type: BackendType, engine: unknown): EngineState =>
  engineStateOf(stateKind(type), { ...who, engine });
const v1 = (type: BackendType, ids: string[]) => ({ kind: type, v1RemoteIds: ids });

/** per kind: a state it writes, its labels, malformed ones, v1 ids with the state they mean, bad v1 ids */
const CASES: {
  [T in BackendType]: {
    good: EngineState;
    labels: string[];
    malformed: unknown[];
    legacy: Array<[string[], EngineState]>;
    badLegacy: string[][];
  };
} = {
  local: {
    good: { kind: 'local', container: 'sflow-p12-serve-0' },
    labels: ['sflow-p12-serve-0'],
    malformed: [
      { kind: 'local', container: 7 },
      { kind: 'local', container: '' },
    ],
    legacy: [
      [[], { kind: 'local' }],
      [['sflow-p12-serve-0'], { kind: 'local', container: 'sflow-p12-serve-0' }],
    ],
    badLegacy: [['a', 'b'], ['']],
  },
  docker: {
    good: {
      kind: 'docker',
      members: [{ container: 'sflow-p9-t-0' }, { container: 'sflow-p9-t-1', host: 'ssh://root@h2:22' }],
    },
    labels: ['sflow-p9-t-0', 'sflow-p9-t-1@ssh://root@h2:22'],
    malformed: [
      { kind: 'docker', members: [] },
      { kind: 'docker', members: [{ name: 'x' }] },
      { kind: 'docker', members: 'sflow-p9-t-0@h2' },
    ],
    legacy: [
      [
        ['sflow-p9-t-0', 'sflow-p9-t-1@ssh://root@h2:22'],
        {
          kind: 'docker',
          members: [{ container: 'sflow-p9-t-0' }, { container: 'sflow-p9-t-1', host: 'ssh://root@h2:22' }],
        },
      ],
    ],
    badLegacy: [[], ['@h2'], ['c@']],
  },
  slurm: {
    good: { kind: 'slurm', job: '4711', steps: ['0', '3'] },
    labels: ['4711.0', '4711.3'],
    malformed: [
      { kind: 'slurm', steps: ['0'] },
      { kind: 'slurm', job: 4711, steps: [] },
      { kind: 'slurm', job: '4711' },
    ],
    legacy: [
      [[], { kind: 'slurm', steps: [] }],
      [['4711.0'], { kind: 'slurm', job: '4711', steps: ['0'] }],
      [['88_3.1', '88_3.2'], { kind: 'slurm', job: '88_3', steps: ['1', '2'] }],
    ],
    badLegacy: [['4711'], ['4711.'], ['1.0', '2.0']],
  },
  kubernetes: {
    good: { kind: 'kubernetes', namespace: 'team-a', pods: ['r-serve-1-0', 'r-serve-1-1'] },
    labels: ['team-a/r-serve-1-0', 'team-a/r-serve-1-1'],
    malformed: [
      { kind: 'kubernetes', pods: ['p'] },
      { kind: 'kubernetes', namespace: 'ns', pods: [] },
      { kind: 'kubernetes', namespace: 'ns/p' },
    ],
    legacy: [[['team-a/p0', 'team-a/p1'], { kind: 'kubernetes', namespace: 'team-a', pods: ['p0', 'p1'] }]],
    badLegacy: [[], ['p0'], ['a/p0', 'b/p1'], ['ns/']],
  },
};

const types = Object.keys(BACKEND_KINDS) as BackendType[];

describe('engine state of every backend kind', () => {
  it('every registered kind declares its own handle state (and this test covers each)', () => {
    expect(Object.keys(CASES).sort()).toEqual([...types].sort());
    for (const t of types) expect(BACKEND_KINDS[t].handleState.type).toBe(t);
  });

  for (const t of types) {
    const c = CASES[t];
    describe(t, () => {
      it('parses the state it writes, unchanged through JSON, with its labels', () => {
        expect(parse(t, JSON.parse(JSON.stringify(c.good)))).toEqual(c.good);
        const state = parse(t, c.good);
        expect(engineFields(stateKind(t), { ...state, kind: t })).toEqual({
          engine: c.good,
          remoteIds: c.labels,
        });
      });

      it("refuses another kind's state, a missing one and a malformed one, naming the attempt", () => {
        for (const other of types.filter((o) => o !== t))
          expect(() => parse(t, CASES[other].good)).toThrow(
            `handle of serve#2 (backend 'b'): its engine state is of kind '${other}', not '${t}'`,
          );
        expect(() => parse(t, undefined)).toThrow(/serve#2.*has no engine state/);
        for (const bad of c.malformed) {
          let err: unknown;
          try {
            parse(t, bad);
          } catch (e) {
            err = e;
          }
          expect(err, JSON.stringify(bad)).toBeInstanceOf(SflowError);
          expect((err as SflowError).message).toMatch(new RegExp(`serve#2.*${t} engine state is malformed`));
          expect((err as SflowError).code).toBe('run.handle_state');
        }
      });

      it('reads version-1 ids through its legacy parse, and refuses ids it cannot read', () => {
        for (const [ids, state] of c.legacy) expect(parse(t, v1(t, ids))).toEqual(state);
        for (const ids of c.badLegacy)
          expect(() => parse(t, v1(t, ids)), JSON.stringify(ids)).toThrow(/version-1 ids cannot be read/);
        // v1 ids of one kind never pass for another
        const other = types.find((o) => o !== t)!;
        expect(() => parse(t, v1(other, c.legacy[0][0]))).toThrow(/of kind/);
      });
    });
  }
});

/** a ledger line exactly as version 1 wrote it */
function v1Line(type: string, remoteIds: string[], extra: Partial<TaskHandle> = {}): string {
  const handle = {
    v: 1,
    backend: type,
    type,
    runId: 'old',
    task: 'serve',
    attempt: 1,
    state: 'RUNNING',
    nodes: ['n0'],
    remoteIds,
    submittedAt: new Date(0).toISOString(),
    logPath: '/dev/null',
    ...extra,
  };
  return JSON.stringify({ v: 1, t: 0, op: 'launched', handle });
}

describe('ledgers written by version 1', () => {
  it('are read as current handles whose ids only the kind parses', () => {
    const file = join(dir, 'v1.jsonl');
    writeFileSync(
      file,
      [v1Line('docker', ['sflow-p9-t-0@ssh://h2']), v1Line('slurm', ['4711.0'], { task: 'b' })].join('\n') +
        '\n',
    );
    const { open, skipped } = readHandleLedger(file);
    expect(skipped).toBe(0);
    expect(open.map((h) => h.v)).toEqual([HANDLE_VERSION, HANDLE_VERSION]);
    expect(membersOf(open[0])).toEqual([{ name: 'sflow-p9-t-0', host: 'ssh://h2', seen: false }]);
    expect(engineStateOf(BACKEND_KINDS.slurm.handleState, open[1])).toEqual({
      kind: 'slurm',
      job: '4711',
      steps: ['0'],
    });
    // the labels stay what they were (events and summaries show them)
    expect(open[1].remoteIds).toEqual(['4711.0']);
  });

  it('a local attempt of a version-1 ledger is recovered: its process group is stopped', async () => {
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    const exited = new Promise((r) => child.once('exit', r));
    const file = join(dir, 'v1-local.jsonl');
    const startTime = processStartTime(pid) ?? undefined;
    writeFileSync(
      file,
      v1Line('local', [], { process: { pid, pgid: pid, host: hostname(), startTime } }) + '\n',
    );
    const [h] = readHandleLedger(file).open;
    const b = new LocalBackend(plannedBackend(), {
      runId: 'recoverer',
      runDir: dir,
      log: () => undefined,
      options: {},
      env: process.env,
      gpuTasks: false,
    });
    const r = await b.recover(h, { graceMs: 1000 }, AbortSignal.timeout(15_000));
    expect(r).toMatchObject({ found: true, stop: { gone: true } });
    await exited;
    // and a record of another kind given to it is refused, not reported as "nothing left"
    await expect(
      b.recover(
        { ...h, engine: { kind: 'docker', members: [] } },
        { graceMs: 0 },
        AbortSignal.timeout(5_000),
      ),
    ).rejects.toThrow(/engine state is of kind 'docker', not 'local'/);
  });
});

describe('late engine names (HandleStatus.named)', () => {
  it('update the typed state and its labels, recorded in the ledger once', () => {
    const handle: TaskHandle = {
      v: HANDLE_VERSION,
      backend: 'cluster',
      type: 'slurm',
      runId: 'r',
      task: 'serve',
      attempt: 1,
      state: 'SUBMITTED',
      nodes: [],
      ...engineFields(BACKEND_KINDS.slurm.handleState, { kind: 'slurm', job: '7', steps: [] }),
      submittedAt: '',
      logPath: '/dev/null',
    };
    const file = join(dir, 'late.jsonl');
    const ledger = new HandleLedger(file);
    const ops: string[] = [];
    const emitted: string[] = [];
    const named = engineFields(BACKEND_KINDS.slurm.handleState, { kind: 'slurm', job: '7', steps: ['0'] });
    for (let i = 0; i < 2; i++)
      applyHandleStatus(
        handle,
        { state: 'RUNNING', named },
        (op, h) => {
          ops.push(op);
          ledger.write(op, h);
        },
        (e) => emitted.push(e.type),
      );
    ledger.close();
    expect(handle.engine).toEqual({ kind: 'slurm', job: '7', steps: ['0'] });
    expect(handle.remoteIds).toEqual(['7.0']);
    expect(ops).toEqual(['updated', 'updated']); // the names, then the state change; nothing on the repeat
    expect(emitted).toEqual(['task_handle']);
    const [read] = readHandleLedger(file).open;
    expect(engineStateOf(BACKEND_KINDS.slurm.handleState, read)).toEqual({
      kind: 'slurm',
      job: '7',
      steps: ['0'],
    });
  });
});
