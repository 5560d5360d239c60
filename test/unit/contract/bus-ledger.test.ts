import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/events/bus.js';
import type { RunEvent } from '../../../src/events/events.js';
import { HANDLE_VERSION, type TaskHandle } from '../../../src/events/handle.js';
import { HandleLedger, readHandleLedger } from '../../../src/events/handle-ledger.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-ledger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const handle = (task: string, attempt = 1): TaskHandle => ({
  v: HANDLE_VERSION,
  backend: 'b',
  type: 'local',
  runId: 'r',
  task,
  attempt,
  state: 'SUBMITTED',
  nodes: [],
  engine: { kind: 'local' },
  remoteIds: [],
  submittedAt: '',
  logPath: '/x',
});

describe('event bus', () => {
  it('reports a failing sink once to the other sinks and keeps going', () => {
    const bus = new EventBus();
    const seen: RunEvent[] = [];
    bus.add({
      name: 'broken',
      emit: () => {
        throw new Error('disk full');
      },
    });
    bus.add({ name: 'ok', emit: (e) => seen.push(e) });
    for (let i = 0; i < 3; i++) bus.emit({ type: 'log', level: 'info', message: `m${i}` });
    const failures = seen.filter((e) => e.type === 'sink_failed');
    expect(failures).toEqual([expect.objectContaining({ sink: 'broken', message: 'disk full' })]);
    expect(seen.filter((e) => e.type === 'log')).toHaveLength(3);
    expect(bus.errors).toEqual(['broken: disk full']);
  });
});

describe('handle ledger', () => {
  it('keeps the latest record per attempt, drops ended ones, survives a torn last line', () => {
    const path = join(dir, 'handles.jsonl');
    const l = new HandleLedger(path);
    const a = handle('a');
    l.write('launched', a);
    l.write('launched', a); // repeated: not written twice
    l.write('updated', {
      ...a,
      state: 'RUNNING',
      engine: { kind: 'local', container: 'c7' },
      remoteIds: ['c7'],
    });
    l.write('launched', handle('b'));
    l.write('ended', handle('b'));
    l.close();
    appendFileSync(path, '{"v":1,"t":1,"op":"launched","handle":{"v":1,'); // driver killed mid-write
    const s = readHandleLedger(path);
    expect(s.all.map((h) => h.task)).toEqual(['a', 'b']);
    expect(s.open).toEqual([
      expect.objectContaining({
        task: 'a',
        state: 'RUNNING',
        engine: { kind: 'local', container: 'c7' },
        remoteIds: ['c7'],
      }),
    ]);
    expect(s.skipped).toBe(1);
  });

  it('skips records of another version and reads a missing ledger as empty', () => {
    // a later version (3), and lines whose line and handle versions disagree
    const path = join(dir, 'v3.jsonl');
    writeFileSync(
      path,
      [
        { v: 3, t: 1, op: 'launched', handle: { ...handle('x'), v: 3 } },
        { v: 2, t: 1, op: 'launched', handle: { ...handle('y'), v: 1 } },
        { v: 1, t: 1, op: 'launched', handle: { ...handle('z'), v: 2 } },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    expect(readHandleLedger(path)).toMatchObject({ open: [], skipped: 3 });
    expect(readHandleLedger(join(dir, 'none.jsonl'))).toEqual({ open: [], all: [], skipped: 0 });
  });
});
