/**
 * A real run, wired by the CLI (the composition root): the sinks, the backend registry and the
 * re-plan on the allocated topology are handed to the run session (src/runtime/session.ts),
 * which calls create → preflight → allocate → plan → orchestrate → release in that order. Around
 * it: the run view (console or --tui), the hardware monitor, and report.html afterwards.
 */
import { limitHeapGrowth } from '../util/heap-growth.js';
import type { Backend, BackendContext } from '../backends/backend.js';
import {
  backendCatalog,
  createBackend,
  loadBackendKinds,
  notRunnableError,
  unrunnableBackends,
} from '../backends/registry.js';
import type { LoadedRecipe } from '../config/load.js';
import type { RunEvent, RunEventInput } from '../events/events.js';
import { runDirLayout } from '../outputs/run-dir.js';
import { buildPlan } from '../plan/build.js';
import type { Plan, PlannedBackend } from '../plan/types.js';
import { createProbeDriver } from '../probes/probe-adapter.js';
import type { ProbeDriver } from '../probes/probe-driver.js';
import { lostRuns } from '../runtime/live-runs.js';
import type { RunUploadsFactory } from '../runtime/finalize.js';
import { runSession, type SessionResult, type SessionResume } from '../runtime/session.js';
import { errorMessage } from '../util/errors.js';
import { ensureDir } from '../outputs/ensure-dir.js';
import { RunMonitor } from './run-monitor.js';
import { RUN_RECORD, writeRunRecord, type RunRecord } from '../outputs/run-record.js';
import { isSflowError } from '../util/sflow-error.js';
import { planSinks, runSinks } from './run-sinks.js';
import { holdConsole } from '../util/console-loss.js';
import { lockRunDir } from './run-lock.js';
import { cliOptionBag, type CliOptionBag } from '../util/cli-options.js';

export interface ExecuteOptions {
  /** task working directory: where sflow was started */
  cwd: string;
  logLevel?: string;
  console?: boolean;
  taskOutput?: boolean;
  handleSignals?: boolean;
  warnings?: string[];
  onEvent?: (e: RunEvent) => void;
  /** called with the final plan, before any task starts (the hardware monitor starts its collectors) */
  onPlan?: (plan: Plan, emit: (e: RunEventInput) => void) => Promise<void> | void;
  /** backend instances by type instead of the registry's (tests: a remote fake) */
  backendFactories?: Partial<Record<string, (planned: PlannedBackend, ctx: BackendContext) => Backend>>;
  /** CLI settings handed to the backends (`waitForGpus`, …) */
  backendOptions?: CliOptionBag;
  /** the real plan on the allocated topology (default: run the given plan as it is) */
  replan?: (topology: Record<string, import('../plan/types.js').PlannedNode[]>) => Plan;
  probes?: ProbeDriver;
  graceMs?: number;
  env?: NodeJS.ProcessEnv;
  pollTimeoutMs?: number;
  lostAfter?: number;
  /** cancels the run like a SIGINT */
  signal?: AbortSignal;
  /** uploads of COMPLETED tasks and of the run directory (the CLI passes the S3 uploader) */
  uploads?: RunUploadsFactory;
  out?: (s: string) => void;
  /** the session's lifeline (the CLI arms the run reaper, cli/run-reaper.ts) */
  lifeline?: (runDir: string, graceMs: number | undefined) => Promise<() => void>;
  err?: (s: string) => void;
  /** `--resume`: the session continues the run in plan.paths.runDir (see runtime/resume.ts) */
  resume?: SessionResume;
  /** the earlier sessions' events (a resume): the summary shows every session */
  prior?: RunEvent[];
}

export type ExecuteResult = SessionResult;

/** Runs a built (non-dry-run) plan: the run directory, the sinks, then the session. */
export async function executePlan(plan: Plan, opts: ExecuteOptions): Promise<ExecuteResult> {
  if (plan.dryRun) throw new Error('executePlan: a dry-run plan cannot be executed');
  const factories = opts.backendFactories ?? {};
  const refused = unrunnableBackends(plan).filter((b) => !factories[b.type]);
  if (refused.length) throw notRunnableError(refused[0]);
  await loadBackendKinds(plan.backends.map((b) => b.type)); // only the types this run uses
  // bounded: never recursive mkdir's endless loop (under /proc); a clear error naming the folder
  ensureDir(plan.paths.runDir, {
    what: 'run folder',
    phase: 'run',
    hint: 'choose another --output-dir (or --workspace-dir)',
  });
  // one driver per run folder (a resume already holds it: the lock is re-entrant)
  const lock = lockRunDir(plan.paths.runDir, 'sflow run', 'cannot run in');
  const warnings = [
    ...(opts.warnings ?? []),
    ...(lock.unavailable
      ? [`this run folder is not locked against a second driver: ${lock.unavailable}`]
      : []),
  ];
  const layout = runDirLayout(plan.paths.runDir);
  const commandLogs = planSinks(opts.cwd);
  return runSession({
    trial: plan,
    replan: opts.replan,
    createBackend: (b, ctx) => factories[b.type]?.(b, ctx) ?? createBackend(b, ctx),
    backendOptions: opts.backendOptions,
    sinks: runSinks(layout, opts),
    planSinks: async (p, emit) => {
      await opts.onPlan?.(p, emit);
      return commandLogs(p);
    },
    probes: opts.probes ?? createProbeDriver(),
    cwd: opts.cwd,
    env: opts.env,
    graceMs: opts.graceMs,
    handleSignals: opts.handleSignals,
    signal: opts.signal,
    warnings,
    pollTimeoutMs: opts.pollTimeoutMs,
    lostAfter: opts.lostAfter,
    uploads: opts.uploads,
    resume: opts.resume,
    lifeline: opts.lifeline,
  }).finally(() => lock.release());
}

/** `sflow run` after the trial plan: the session re-plans on what the backends allocate. */
export async function executeRecipe(
  loaded: LoadedRecipe,
  trial: Plan,
  o: {
    workspaceDir: string;
    outputDir?: string;
    runId: string;
    logLevel: string;
    opts: Record<string, unknown>;
    /** tasks' working directory (default: here; a resume: where the run started) */
    cwd?: string;
    /** what ran, for a later --resume: written into the run directory before anything starts */
    record?: { record: RunRecord; recipeText: string };
    resume?: SessionResume;
    prior?: RunEvent[];
    /** warnings the CLI printed (default: the load warnings): recorded, not printed again */
    warnings?: string[];
  },
): Promise<number> {
  // from here a closed stdout or a hung-up terminal only silences the console: the run goes on to
  // its end, its files and its exit code (held until the process ends)
  holdConsole();
  // a long-lived driver: V8's heap kept near its live data (util/heap-growth.ts, docs/scale.md)
  limitHeapGrowth();
  // runs of this user whose driver was killed: stop their leftovers first, say so, mark them
  const options = cliOptionBag(o.opts);
  const lost = await recoverLostRunsBeforeRun(options);
  // http(s) artifacts downloaded (or found in the cache) before anything is allocated; the S3
  // uploader checked now when the plan uploads anything
  const staged = await import('./run-stage.js').then((m) => m.stageRun(loaded, trial));
  if (o.record) saveRunRecord(trial.paths.runDir, o.record);
  const { openRunView } = await import('./run-view.js');
  const view = await openRunView(o.opts); // console or --tui, plus the event-loop stall watchdog
  // hardware monitor: collectors per the plan-time schedule on the final plan, reports after the run
  const monitor = new RunMonitor();
  const r = await executePlan(trial, {
    cwd: o.cwd ?? process.cwd(),
    resume: o.resume,
    prior: o.prior,
    logLevel: o.logLevel,
    console: view.console,
    taskOutput: echoTaskOutput(),
    handleSignals: true,
    lifeline: async (runDir, graceMs) => (await import('./run-reaper.js')).armRunReaper(runDir, graceMs),
    warnings: [...(o.warnings ?? loaded.warnings.map((w) => w.message)), ...lost],
    ...(staged.uploads ? { uploads: staged.uploads } : {}),
    onEvent: (e) => {
      monitor.emit(e);
      view.emit(e);
    },
    onPlan: (plan, emit) => {
      staged.onPlan(plan, emit);
      return monitor.start(plan, emit);
    },
    backendOptions: options,
    replan: (topology) =>
      buildPlan(loaded, {
        workspaceDir: o.workspaceDir,
        outputDir: o.outputDir,
        dryRun: false,
        runId: o.runId,
        catalog: backendCatalog,
        topology,
      }),
  }).finally(() => monitor.stop());
  const code = await view.finish(r);
  await monitor.build();
  await writeReport(r.runDir);
  return code;
}

/** Recovers lost runs (never fails the new run); the lines it printed, for the run's own ledgers. */
async function recoverLostRunsBeforeRun(options: CliOptionBag): Promise<string[]> {
  try {
    if (lostRuns().length === 0) return [];
    const { describeRecovery, recoverLostRuns } = await import('./recover-runs.js');
    const lines = (await recoverLostRuns({ options })).flatMap(describeRecovery);
    for (const l of lines) process.stderr.write(`⚠ ${l}\n`);
    return lines;
  } catch (e) {
    const msg = `could not look for runs that lost their driver: ${errorMessage(e)}`;
    process.stderr.write(`⚠ ${msg}\n`);
    return [msg];
  }
}

/** The run record (a failure only warns: the run goes on, a later --resume needs -f and --force). */
function saveRunRecord(runDir: string, r: { record: RunRecord; recipeText: string }): void {
  try {
    ensureDir(runDir, {
      what: 'run folder',
      phase: 'run',
      hint: 'choose another --output-dir (or --workspace-dir)',
    });
    writeRunRecord(runDir, r.record, r.recipeText);
  } catch (e) {
    if (isSflowError(e)) throw e;
    process.stderr.write(
      `⚠ ${RUN_RECORD} not written (a later --resume will need -f and --force): ${errorMessage(e)}\n`,
    );
  }
}

/** `report.html` from the run's ledger, on every path (a failure to build it only warns). */
async function writeReport(runDir: string): Promise<void> {
  try {
    const { writeRunReport } = await import('../report/load.js');
    process.stdout.write(`  Report: ${writeRunReport(runDir)}\n`);
  } catch (e) {
    process.stderr.write(`⚠ report.html not written: ${errorMessage(e)}\n`);
  }
}

/**
 * Task output is echoed to the console on an interactive terminal only (as nv-sflow 0.3 does:
 * without a TTY it goes only to the task logs); SFLOW_TASK_OUTPUT=always|never overrides.
 */
function echoTaskOutput(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.SFLOW_TASK_OUTPUT ?? 'auto').toLowerCase();
  if (v === 'always' || v === '1') return true;
  if (v === 'never' || v === '0') return false;
  return Boolean(process.stdout.isTTY);
}
