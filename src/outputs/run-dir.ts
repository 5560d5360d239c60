/**
 * Phase 9 of a run (runtime.md 6.1, 8.3): the run directory, one directory and one empty
 * `<task>.log` per concrete task — all before any task starts, so tasks that never ran
 * still leave an empty folder and log — and the inline `file://` artifacts.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Plan } from '../plan/types.js';
import { SflowError } from '../util/sflow-error.js';
import { ensureDir } from './ensure-dir.js';
import { errorMessage } from '../util/errors.js';

export interface RunDirLayout {
  runDir: string;
  sflowLog: string;
  summaryLog: string;
  eventsJsonl: string;
  resultsJson: string;
}

export function runDirLayout(runDir: string): RunDirLayout {
  return {
    runDir,
    sflowLog: resolve(runDir, 'sflow.log'),
    summaryLog: resolve(runDir, 'sflow_summary.log'),
    eventsJsonl: resolve(runDir, 'events.jsonl'),
    resultsJson: resolve(runDir, 'results.json'),
  };
}

/**
 * Creates the run dir, every task dir and empty task log, and the inline artifacts. A start that
 * fails here leaves no (empty) run folder behind.
 */
export function prepareRunDir(plan: Plan): RunDirLayout {
  const runDir = plan.paths.runDir;
  const created = ensureDir(runDir, {
    what: 'run folder',
    phase: 'run',
    hint: 'choose another --output-dir (or --workspace-dir)',
  });
  try {
    for (const t of plan.tasks) {
      // the common case in 2 syscalls less per task: a new folder right under the run folder
      if (!(dirname(t.outputDir) === runDir && tryMkdir(t.outputDir)))
        ensureDir(t.outputDir, { what: `output folder of task '${t.name}'`, phase: 'run' });
      if (dirname(t.logPath) !== t.outputDir)
        ensureDir(dirname(t.logPath), { what: `log folder of task '${t.name}'`, phase: 'run' });
      closeSync(openSync(t.logPath, 'a')); // never truncate: a log is append-only
      // a script too large for one argument: its command runs this file
      if (t.scriptFile) writeFileSync(t.scriptFile, t.script, { mode: 0o644 });
    }
    materializeArtifacts(plan);
  } catch (e) {
    if (created.length) rmSync(created[0], { recursive: true, force: true });
    if (e instanceof SflowError) throw e;
    throw new SflowError('RUN_DIR', `Cannot prepare the run directory ${runDir}: ${errorMessage(e)}`, {
      phase: 'run',
    });
  }
  return runDirLayout(runDir);
}

/** mkdir of one folder whose parent exists; false (nothing thrown) when that did not make it */
function tryMkdir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch {
    return false; // exists already, or a real problem: ensureDir checks and words it
  }
}

/** Writes `content` of inline file:// artifacts (relative paths resolve against the run dir). */
export function materializeArtifacts(plan: Plan): void {
  for (const a of plan.artifacts) {
    if (a.content === undefined) continue;
    const path = isAbsolute(a.path) ? a.path : resolve(plan.paths.runDir, a.path);
    ensureDir(dirname(path), { what: `folder of artifact '${a.name}'`, phase: 'run' });
    writeFileSync(path, a.content);
  }
}
