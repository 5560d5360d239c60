/**
 * Task folders and logs made lazily (runtime.md 8.3): a task's folder and log exist before it
 * starts, a task that is not next has none yet while another runs, and by the end of the run every
 * task has them, whatever ended it: completion, fail-fast, a cancel, the workflow timeout (Ctrl-C:
 * runtime-signals.test.ts, against a real driver process).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/cli/run-execute.js';
import type { RunEvent } from '../../src/events/events.js';
import { buildPlan, type SimpleTask } from './runtime-plan.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-task-folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

async function run(
  tasks: SimpleTask[],
  o: { timeoutS?: number; cancelWhen?: (e: RunEvent) => boolean } = {},
) {
  const runDir = join(root, `wf-${++n}`);
  const plan = buildPlan(runDir, tasks);
  if (o.timeoutS !== undefined) plan.workflowTimeoutS = o.timeoutS;
  const cancel = new AbortController();
  const r = await executePlan(plan, {
    cwd: root,
    console: false,
    out: () => undefined,
    err: () => undefined,
    signal: cancel.signal,
    graceMs: 500,
    onEvent: (e) => {
      if (o.cancelWhen?.(e)) cancel.abort();
    },
  });
  const log = (t: string) => readFileSync(join(runDir, t, `${t}.log`), 'utf8');
  return { r, runDir, log };
}

/** every task folder with its log, and nothing else made for it */
function expectAllFolders(runDir: string, names: string[]) {
  for (const t of names) expect(readdirSync(join(runDir, t)), t).toContain(`${t}.log`);
}

describe('task folders made lazily (runtime.md 8.3)', () => {
  it('a task has its folder and log when it starts; a task two links further has none yet', async () => {
    // a checks, while it runs, that its own log exists and that c (after b) has no folder yet
    const check = `test -f "$SFLOW_TASK_OUTPUT_DIR/a.log" || exit 5; test -e "$SFLOW_WORKFLOW_OUTPUT_DIR/c" && exit 6; echo checked`;
    const { r, runDir, log } = await run([
      { name: 'a', script: check },
      { name: 'b', dependsOn: ['a'], script: 'test -f "$SFLOW_TASK_OUTPUT_DIR/b.log"' },
      { name: 'c', dependsOn: ['b'], script: 'test -f "$SFLOW_TASK_OUTPUT_DIR/c.log"' },
    ]);
    expect(r.tasks).toEqual([
      ['a', 'COMPLETED'],
      ['b', 'COMPLETED'],
      ['c', 'COMPLETED'],
    ]);
    expect(log('a')).toBe('checked\n');
    expectAllFolders(runDir, ['a', 'b', 'c']);
  });

  it('fail-fast: the tasks that never started get an empty folder and log at the end', async () => {
    const { r, runDir, log } = await run([
      { name: 'bad', script: 'exit 3' },
      { name: 'after', dependsOn: ['bad'], script: 'echo never' },
      { name: 'later', dependsOn: ['after'], script: 'echo never' },
    ]);
    expect(r.tasks).toEqual([
      ['bad', 'FAILED'],
      ['after', 'CANCELLED'],
      ['later', 'CANCELLED'],
    ]);
    expectAllFolders(runDir, ['bad', 'after', 'later']);
    expect(log('later')).toBe('');
  });

  it('a cancel: the tasks that never started get an empty folder and log at the end', async () => {
    const { r, runDir, log } = await run(
      [
        { name: 'long', script: 'sleep 30' },
        { name: 'next', dependsOn: ['long'], script: 'echo never' },
        { name: 'last', dependsOn: ['next'], script: 'echo never' },
      ],
      { cancelWhen: (e) => e.type === 'task_started' && e.task === 'long' },
    );
    expect(r.exitCode).toBe(130);
    expect(r.tasks.map(([, s]) => s)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);
    expectAllFolders(runDir, ['long', 'next', 'last']);
    expect(log('last')).toBe('');
  });

  it('the workflow timeout: the tasks that never started get an empty folder and log at the end', async () => {
    const { r, runDir, log } = await run(
      [
        { name: 'long', script: 'sleep 30' },
        { name: 'next', dependsOn: ['long'], script: 'echo never' },
        { name: 'last', dependsOn: ['next'], script: 'echo never' },
      ],
      { timeoutS: 1 },
    );
    expect(r.message).toContain('3 task(s) cancelled (long, next, last)');
    expectAllFolders(runDir, ['long', 'next', 'last']);
    expect(log('last')).toBe('');
    expect(existsSync(join(runDir, 'sflow_summary.log'))).toBe(true);
  });
});
