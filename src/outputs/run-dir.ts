/**
 * Phase 9 of a run (runtime.md 6.1, 8.3): the run directory and the inline `file://` artifacts up
 * front; one directory and one empty `<task>.log` per concrete task lazily (`TaskFolders`): each
 * before its task starts, and those of tasks that never started at the end of the run, whatever
 * ended it — so a cancelled task still leaves an empty folder and log. On this VM's ext4 a folder
 * and a log cost ~0.45 ms; made at launch (and ahead, while a task runs, for its dependents) the
 * first task no longer waits for every other task's.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Plan, PlannedTask } from '../plan/types.js';
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
 * Creates the run dir and the inline artifacts; the task folders are made through the returned
 * `TaskFolders`. A start that fails here leaves no (empty) run folder behind.
 */
export function prepareRunDir(plan: Plan): RunDirLayout & { folders: TaskFolders } {
  const runDir = plan.paths.runDir;
  const created = ensureDir(runDir, {
    what: 'run folder',
    phase: 'run',
    hint: 'choose another --output-dir (or --workspace-dir)',
  });
  try {
    materializeArtifacts(plan);
  } catch (e) {
    if (created.length) rmSync(created[0], { recursive: true, force: true });
    throw asRunDirError(runDir, e);
  }
  return { ...runDirLayout(runDir), folders: new TaskFolders(plan) };
}

/** Each concrete task's folder, empty log and script file, made once: at launch, or at the end. */
export class TaskFolders {
  private readonly made = new Set<string>();
  private readonly byName: Map<string, PlannedTask>;

  constructor(private readonly plan: Plan) {
    this.byName = new Map(plan.tasks.map((t) => [t.name, t]));
  }

  /** makes the task's folder, log and script file unless done already; throws a worded error */
  ensure(name: string): void {
    if (this.made.has(name)) return;
    const t = this.byName.get(name);
    if (!t) return;
    const runDir = this.plan.paths.runDir;
    try {
      // the common case in 2 syscalls less: a new folder right under the run folder
      if (!(dirname(t.outputDir) === runDir && tryMkdir(t.outputDir)))
        ensureDir(t.outputDir, { what: `output folder of task '${t.name}'`, phase: 'run' });
      if (dirname(t.logPath) !== t.outputDir)
        ensureDir(dirname(t.logPath), { what: `log folder of task '${t.name}'`, phase: 'run' });
      closeSync(openSync(t.logPath, 'a')); // never truncate: a log is append-only
      // a script too large for one argument: its command runs this file
      if (t.scriptFile) writeFileSync(t.scriptFile, t.script, { mode: 0o644 });
    } catch (e) {
      throw asRunDirError(runDir, e);
    }
    this.made.add(name);
  }

  /** every task's that is not made yet (the end of a run); the errors, one line each */
  ensureAll(): string[] {
    const errors: string[] = [];
    for (const t of this.plan.tasks) {
      try {
        this.ensure(t.name);
      } catch (e) {
        errors.push(errorMessage(e));
      }
    }
    return errors;
  }
}

function asRunDirError(runDir: string, e: unknown): SflowError {
  if (e instanceof SflowError) return e;
  return new SflowError('RUN_DIR', `Cannot prepare the run directory ${runDir}: ${errorMessage(e)}`, {
    phase: 'run',
  });
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
