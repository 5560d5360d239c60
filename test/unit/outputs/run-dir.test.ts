/** The run folder is made before any task starts; a start that fails there leaves nothing behind. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  it('creates the run folder, every task folder and an empty log per task', () => {
    const out = join(root, 'ok', 'sflow_output');
    const p = plan(out, [plannedTask('a', {}, join(out, 'wf-1')), plannedTask('b', {}, join(out, 'wf-1'))]);
    prepareRunDir(p);
    expect(readdirSync(p.paths.runDir).sort()).toEqual(['a', 'b']);
    expect(readdirSync(join(p.paths.runDir, 'a'))).toEqual(['a.log']);
  });

  it('a task folder that cannot be made fails the start and removes the run folder it created', () => {
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
    let err: unknown;
    try {
      prepareRunDir(p);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SflowError);
    expect((err as SflowError).message).toBe(
      `cannot create the output folder of task 'b' ${join(blocked, 'b')}: ${blocked} exists and is not a folder`,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(base)).toEqual(['a-file']);
  });
});
