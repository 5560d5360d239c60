/**
 * `sflow run --resume <run dir> [-f …] [--force]`: run again what an earlier run did not complete
 * (and what depends on it) in the same run directory, reusing what it completed.
 *
 *   the run's ledger (events.jsonl) and record (sflow_run.json, sflow_recipe.yaml)
 *   → the recipe (given with -f, else the recorded one) → trial plan with the same run id
 *   → refuse when the recipe or its resolved variables changed (a diff; --force goes on)
 *   → refuse while the earlier run still runs (its driver, or attempts still alive)
 *   → what runs again (runtime/resume.ts) → one more session appended to the same ledger.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { loadRecipe, type LoadedRecipe } from '../config/load.js';
import { applyMonitorFlags } from '../config/monitor-flags.js';
import { readHandleLedger, ledgerPath } from '../events/handle-ledger.js';
import { readResultsIndex } from '../outputs/results-index.js';
import { readRunRecord, RUN_RECORD, type RecordedRun, type RunInputs } from '../outputs/run-record.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import { checkArtifactPaths } from '../preflight/artifacts.js';
import { driverState, foldEarlierRun, planResume, type EarlierRun } from '../runtime/resume.js';
import { readLedger } from '../report/load.js';
import {
  backendCatalog,
  createBackend,
  loadBackendKinds,
  notRunnableError,
  unrunnableBackends,
} from '../backends/registry.js';
import { errorMessage } from '../util/errors.js';
import { inputFiles, printWarnings } from './common.js';
import { loadWithSecrets, runLoadOptions, warnSecretsOnCommandLine } from './secrets.js';
import { reportError } from './errors.js';
import { runPreflight } from './run-preflight.js';
import {
  buildRunRecord,
  composedRecipeText,
  recordChanges,
  runInputs,
  secretsOf,
  variablesOf,
} from './run-record.js';
import { lockRunDir, type RunLock } from './run-lock.js';
import { escapeControls } from '../util/ansi.js';

const refuse = (message: string, hint?: string) =>
  new SflowError('run.resume_refused', message, { phase: 'preflight', hint });

/** What the steps of one resume share: the earlier run as recorded, and the recipe loaded now. */
interface ResumeState {
  runDir: string;
  opts: Record<string, unknown>;
  /** the run's ledger so far */
  events: ReturnType<typeof readLedger>;
  earlier: EarlierRun;
  /** what it recorded it ran (absent: a run by an older sflow) */
  recorded: RecordedRun | undefined;
  force: boolean;
  loaded: LoadedRecipe;
  inputs: RunInputs;
  workspaceDir: string;
  runId: string;
  /** the trial plan with the run's id */
  trial: Plan;
  secret: Set<string>;
}

export async function resumeCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  let lock: RunLock | undefined;
  try {
    const runDir = resumedRunDir(opts);
    // one driver per run folder: a second resume (or a recover) of it is refused from here on
    lock = lockRunDir(runDir, 'sflow run --resume', 'cannot resume');
    const s = await loadAgain(runDir, positional, opts);
    const { changes, recipeText, warnings } = refuseChanges(s);
    await refuseUnrunnable(s);
    return await runWhatIsLeft(s, changes, recipeText, warnings);
  } catch (e) {
    return reportError(e);
  } finally {
    lock?.release();
  }
}

/** The run directory given to --resume (with no flag that contradicts it). */
function resumedRunDir(opts: Record<string, unknown>): string {
  if (opts.dryRun) throw usage('--resume cannot be combined with --dry-run');
  if (opts.outputDir !== undefined)
    throw usage('--output-dir cannot be combined with --resume (the run directory is given)');
  const runDir = resolve(String(opts.resume));
  if (!existsSync(join(runDir, 'events.jsonl')) || !statSync(runDir).isDirectory())
    throw usage(`${runDir} is not an sflow run directory (no events.jsonl)`);
  return runDir;
}

/**
 * The earlier run from its ledger and record, and its recipe loaded again (given with -f, else
 * the recorded one; secrets asked for again) into a trial plan with the same run id.
 */
async function loadAgain(
  runDir: string,
  positional: string[],
  opts: Record<string, unknown>,
): Promise<ResumeState> {
  const events = readLedger(runDir);
  const earlier = foldEarlierRun(events);
  if (earlier.sessions === 0) throw usage(`${runDir}/events.jsonl records no run`);
  const recorded = readRunRecord(runDir);
  const force = Boolean(opts.force);
  const given = [...positional, ...((opts.file as string[] | undefined) ?? [])].length > 0;
  if (!recorded && !(given && force))
    throw refuse(
      `cannot resume ${runDir}: it does not record what it ran (${RUN_RECORD}; a run by an older sflow)`,
      'give its recipe again with -f and add --force (it cannot be compared with the original)',
    );
  const files = given ? inputFiles(positional, opts) : [recorded!.recipePath];
  // secret values are not recorded: the resume is given them again (environment, files, a prompt)
  const loaded = await loadWithSecrets(
    () => loadRecipe(runLoadOptions(files, opts)),
    opts,
    `cannot resume ${runDir}`,
  );
  warnSecretsOnCommandLine(loaded, (w) => loaded.warnings.push({ message: w }));
  // the recorded recipe has the original overrides and monitor flags in it; flags given now only fill gaps
  const inputs = runInputs(files, opts);
  applyMonitorFlags(loaded.recipe, {
    workflow: inputs.enableWorkflowMonitor,
    tasks: inputs.enableTaskMonitor,
  });
  printWarnings(loaded.warnings);
  const workspaceDir = resolve(
    (opts.workspaceDir as string | undefined) ?? recorded?.record.workspace_dir ?? process.cwd(),
  );
  const runId = basename(runDir);
  const trial = buildPlan(loaded, {
    workspaceDir,
    outputDir: dirname(runDir),
    dryRun: false,
    runId,
    catalog: backendCatalog,
  });
  const secret = secretsOf(loaded);
  if (trial.workflow !== earlier.workflow)
    throw refuse(
      `cannot resume ${runDir}: it ran workflow '${escapeControls(earlier.workflow)}', the recipe is '${trial.workflow}'`,
    );
  return {
    runDir,
    opts,
    events,
    earlier,
    recorded,
    force,
    loaded,
    inputs,
    workspaceDir,
    runId,
    trial,
    secret,
  };
}

/** What changed since the run: refused with the diff unless --force (then a warning of the run). */
function refuseChanges(s: ResumeState): { changes: string[]; recipeText: string; warnings: string[] } {
  const { runDir, recorded, loaded } = s;
  const recipeText = composedRecipeText(loaded, s.inputs);
  const changes = recorded
    ? recordChanges(
        { recipeText: recorded.recipeText, variables: recorded.record.variables },
        { recipeText, variables: variablesOf(s.trial, s.secret) },
      )
    : [];
  if (changes.length && !s.force)
    throw refuse(
      `cannot resume ${runDir}: the recipe or its variables changed since it ran\n${changes.join('\n')}`,
      'run it as it was (sflow run --resume DIR without -f runs the recorded recipe), or add --force to resume with the changed recipe',
    );
  const warnings = loaded.warnings.map((w) => w.message);
  if (changes.length) {
    const w = `resumed with --force although the recipe or its variables changed:\n${changes.join('\n')}`;
    process.stderr.write(`⚠ ${w}\n`);
    warnings.push(w);
  }
  return { changes, recipeText, warnings };
}

/** Preflight warnings; refused when a backend cannot run here or the earlier run still runs. */
async function refuseUnrunnable(s: ResumeState): Promise<void> {
  const { trial, loaded, opts } = s;
  for (const w of runPreflight(trial, loaded, opts)) process.stderr.write(`⚠ ${w}\n`);
  for (const w of checkArtifactPaths(loaded, s.workspaceDir, Boolean(opts.skipArtifactCheck)))
    process.stderr.write(`⚠ ${w}\n`);
  const refused = unrunnableBackends(trial);
  if (refused.length) throw notRunnableError(refused[0]);
  await refuseWhileRunning(s.runDir, s.earlier, trial, s.force);
}

/** What runs again (runtime/resume.ts), run as one more session of the same run; nothing: 0. */
async function runWhatIsLeft(
  s: ResumeState,
  changes: string[],
  recipeText: string,
  warnings: string[],
): Promise<number> {
  const { runDir, trial, recorded, runId, workspaceDir, opts } = s;
  const plan = planResume(
    trial.tasks.map((t) => ({
      name: t.name,
      dependsOn: t.dependsOn,
      service: t.probes.readiness.length > 0,
    })),
    s.earlier,
  );
  if (plan.rerun.length === 0) {
    process.stdout.write(
      `✓ Nothing to resume: every task of ${runId} completed\n  Output folder: ${runDir}\n`,
    );
    return 0;
  }
  const results = readResultsIndex(runDir);
  for (const k of Object.keys(results)) if (!plan.reused.has(k)) delete results[k];
  const { executeRecipe } = await import('./run-execute.js');
  const cwd = recorded && existsSync(recorded.record.cwd) ? recorded.record.cwd : process.cwd();
  return await executeRecipe(s.loaded, trial, {
    workspaceDir,
    outputDir: dirname(runDir),
    runId,
    cwd,
    logLevel: opts.verbose && opts.logLevel === 'info' ? 'debug' : String(opts.logLevel ?? 'info'),
    opts,
    // a forced resume runs a changed recipe: the record says what the run runs now
    record:
      changes.length || !recorded
        ? { record: buildRunRecord(trial, s.inputs, { cwd, workspaceDir, secret: s.secret }), recipeText }
        : undefined,
    resume: { tasks: plan, session: plan.session, rerun: plan.rerun, forced: changes.length > 0, results },
    prior: s.events,
    warnings,
  });
}

const usage = (message: string) =>
  new SflowError('cli.resume_usage', message, {
    phase: 'usage',
    hint: 'sflow run --resume <run dir> [-f …]',
  });

/**
 * Refuses while the earlier run is still going: its last session has no end and its driver is
 * alive (never overridden), or attempts it launched are still alive (--force goes on: a pid reused
 * by someone else can look alive).
 */
async function refuseWhileRunning(
  runDir: string,
  earlier: EarlierRun,
  trial: Plan,
  force: boolean,
): Promise<void> {
  if (!earlier.finished) {
    const d = driverState(earlier.driver);
    if (d === 'alive')
      throw refuse(
        `cannot resume ${runDir}: the run is still going (its driver, pid ${earlier.driver!.pid}, is alive)`,
        'wait for it to end, or stop it (Ctrl-C in its terminal, or kill ' +
          String(earlier.driver!.pid) +
          ') and resume then',
      );
    if (d === 'unknown' && earlier.driver && !force)
      throw refuse(
        `cannot resume ${runDir}: its last session has not ended and its driver ran on ${escapeControls(earlier.driver.host)}, where this sflow cannot check it`,
        'make sure it is gone, then add --force',
      );
  }
  const alive: string[] = [];
  const open = readHandleLedger(ledgerPath(runDir)).open;
  const byName = new Map(trial.backends.map((b) => [b.name, b]));
  await loadBackendKinds(trial.backends.map((b) => b.type));
  for (const h of open) {
    const planned = byName.get(h.backend);
    if (!planned) continue;
    try {
      const b = createBackend(planned, {
        runId: trial.runId,
        runDir,
        log: () => undefined,
        options: {},
        env: process.env,
        gpuTasks: false,
      });
      const seen = await b.inspect(h, AbortSignal.timeout(10_000));
      if (seen.alive)
        alive.push(`${h.task} attempt ${h.attempt}${h.process ? ` (process group ${h.process.pgid})` : ''}`);
    } catch (e) {
      alive.push(`${h.task} attempt ${h.attempt} (cannot check: ${errorMessage(e)})`);
    }
  }
  if (alive.length && !force)
    throw refuse(
      `cannot resume ${runDir}: attempts of the earlier run are still alive: ${alive.join(', ')}`,
      'stop them first (a local process group: kill -TERM -- -PGID), or add --force if they are not what they seem',
    );
}
