/**
 * Phase 9 of a run (runtime.md 6.1, 8.3): the run directory, one directory and one empty
 * `<task>.log` per concrete task — all before any task starts, so tasks that never ran
 * still leave an empty folder and log — and the inline `file://` artifacts.
 */
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Plan } from '../plan/types.js';
import { SflowError } from '../config/errors.js';
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

/** Creates the run dir, every task dir and empty task log, and the inline artifacts. */
export function prepareRunDir(plan: Plan): RunDirLayout {
  const runDir = plan.paths.runDir;
  try {
    mkdirSync(runDir, { recursive: true });
    for (const t of plan.tasks) {
      mkdirSync(t.outputDir, { recursive: true });
      mkdirSync(dirname(t.logPath), { recursive: true });
      closeSync(openSync(t.logPath, 'a')); // never truncate: a log is append-only
    }
    materializeArtifacts(plan);
  } catch (e) {
    if (e instanceof SflowError) throw e;
    throw new SflowError('RUN_DIR', `Cannot prepare the run directory ${runDir}: ${errorMessage(e)}`, {
      phase: 'run',
    });
  }
  return runDirLayout(runDir);
}

/** Writes `content` of inline file:// artifacts (relative paths resolve against the run dir). */
export function materializeArtifacts(plan: Plan): void {
  for (const a of plan.artifacts) {
    if (a.content === undefined) continue;
    const path = isAbsolute(a.path) ? a.path : resolve(plan.paths.runDir, a.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, a.content);
  }
}
