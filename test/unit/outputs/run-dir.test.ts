/**
 * The run folder is made before any task starts (a start that fails there leaves nothing behind);
 * each task's folder and empty log when asked (at its launch), the others' at the end.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { prepareRunDir } from '../../../src/outputs/run-dir.js';
import type { Plan } from '../../../src/plan/types.js';
import { plannedTask } from '../../helpers/planned-task.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-run-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function plan(outputDir: string, tasks: ReturnType<typeof plannedTask>[]): Plan {
  const runDir = join(outputDir, 'wf-1');
  return {
    workflow: 'wf',
    runId: 'wf-1',
    dryRun: false,
    paths: { workspaceDir: root, outputDir, runDir },
    variables: [],
    backends: [],
    artifacts: [],
    tasks,
    order: tasks.map((t) => t.name),
    warnings: [],
    storage: [],
    uploadAll: null,
    workflowMonitor: null,
  };
}

describe('prepareRunDir', () => {
  it('creates the run folder only; a task folder and empty log on ensure, the rest on ensureAll', () => {
    const out = join(root, 'ok', 'sflow_output');
    const runDir = join(out, 'wf-1');
    const p = plan(out, [
      plannedTask('a', {}, runDir),
      plannedTask('b', {}, runDir),
      plannedTask('c', {}, runDir),
    ]);
    const { folders } = prepareRunDir(p);
    expect(readdirSync(runDir)).toEqual([]);
    folders.ensure('b');
    expect(readdirSync(runDir)).toEqual(['b']);
    expect(readdirSync(join(runDir, 'b'))).toEqual(['b.log']);
    appendFileSync(join(runDir, 'b', 'b.log'), 'output\n');
    folders.ensure('b'); // once made, never again: the log is not truncated
    expect(folders.ensureAll()).toEqual([]);
    expect(readdirSync(runDir).sort()).toEqual(['a', 'b', 'c']);
    expect(readFileSync(join(runDir, 'a', 'a.log'), 'utf8')).toBe('');
    expect(readFileSync(join(runDir, 'b', 'b.log'), 'utf8')).toBe('output\n');
  });

  it('a task folder that cannot be made: ensure throws the worded error, ensureAll returns it', () => {
    const base = join(root, 'bad');
    mkdirSync(base);
    const blocked = join(base, 'a-file');
    writeFileSync(blocked, 'x'); // a file where task b's folder must go
    const out = join(base, 'sflow_output');
    const runDir = join(out, 'wf-1');
    const p = plan(out, [
      plannedTask('a', {}, runDir),
      plannedTask('b', { outputDir: join(blocked, 'b'), logPath: join(blocked, 'b', 'b.log') }),
    ]);
    const { folders } = prepareRunDir(p);
    const want = `cannot create the output folder of task 'b' ${join(blocked, 'b')}: ${blocked} exists and is not a folder`;
    expect(() => folders.ensure('b')).toThrow(want);
    expect(folders.ensureAll()).toEqual([want]);
    expect(readdirSync(runDir)).toEqual(['a']); // the others are still made
  });

  it('an artifact that cannot be written fails the start and removes the run folder it created', () => {
    const base = join(root, 'bad-artifact');
    mkdirSync(base);
    writeFileSync(join(base, 'blocker'), 'x');
    const out = join(base, 'sflow_output');
    const p = plan(out, [plannedTask('a', {}, join(out, 'wf-1'))]);
    p.artifacts = [
      { name: 'cfg', path: join(base, 'blocker', 'cfg.json'), content: '{}' } as Plan['artifacts'][number],
    ];
    expect(() => prepareRunDir(p)).toThrow(SflowError);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(base)).toEqual(['blocker']);
  });
});
