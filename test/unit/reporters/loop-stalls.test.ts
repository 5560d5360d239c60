import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LoopStallWatchdog, stallThresholdMs } from '../../../src/reporters/loop-stalls.js';
import type { RunEvent } from '../../../src/events/events.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-stalls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ev = (e: any): RunEvent => ({ t: Date.now(), ...e });

function blockFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* a blocked event loop */
  }
}

const nextTick = () => new Promise((r) => setTimeout(r, 150));

describe('event-loop stall watchdog', () => {
  it('records a blocked loop with the running tasks, warns, and sums up at the end', async () => {
    const runDir = join(dir, 'run1');
    const warnings: string[] = [];
    const w = new LoopStallWatchdog({ thresholdMs: 200, warn: (m) => warnings.push(m) });
    mkdirSync(runDir);
    w.emit(ev({ type: 'run_started', workflow: 'wf', runId: 'r', runDir, tasks: ['a', 'b'] }));
    w.emit(ev({ type: 'task_started', task: 'a', attempt: 1 }));
    w.emit(ev({ type: 'task_started', task: 'b', attempt: 1 }));
    w.emit(ev({ type: 'task_finished', task: 'b', attempt: 1, status: 'COMPLETED', exitCode: 0 }));
    await nextTick();
    blockFor(600);
    await nextTick();
    w.emit(ev({ type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'ok' }));
    expect(w.stalls.length).toBeGreaterThanOrEqual(1);
    expect(w.stalls[0].running).toEqual(['a']);
    const text = readFileSync(join(runDir, 'loop_stalls.txt'), 'utf8');
    expect(text).toMatch(/event loop blocked for \d+ ms \(threshold 200 ms\)/);
    expect(text).toContain('running tasks: a\n');
    expect(text).toContain('task_finished b COMPLETED');
    expect(text).toMatch(/^summary: \d+ event-loop stall\(s\) over 200 ms, longest \d+ ms/m);
    expect(warnings[0]).toMatch(/event loop was blocked for \d+\.\ds \(running: a\)/);
    expect(warnings.at(-1)).toMatch(/event-loop stall\(s\)/);
  });

  it('a run without stalls writes no file and says nothing', async () => {
    const runDir = join(dir, 'run2');
    const warnings: string[] = [];
    const w = new LoopStallWatchdog({ thresholdMs: 5_000, warn: (m) => warnings.push(m) });
    w.emit(ev({ type: 'run_started', workflow: 'wf', runId: 'r', runDir, tasks: [] }));
    await nextTick();
    w.emit(ev({ type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'ok' }));
    expect(existsSync(join(runDir, 'loop_stalls.txt'))).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('threshold from SFLOW_LOOP_STALL_MS, 1 s by default', () => {
    expect(stallThresholdMs({})).toBe(1000);
    expect(stallThresholdMs({ SFLOW_LOOP_STALL_MS: '250' })).toBe(250);
    expect(stallThresholdMs({ SFLOW_LOOP_STALL_MS: 'x' })).toBe(1000);
  });
});
