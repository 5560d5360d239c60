/**
 * executePlan: the single entry the CLI calls with a built (non-dry-run) Plan. Phases 7–12 of
 * runtime.md 6.1: prepare the run dir, open the sinks (events.jsonl, sflow.log,
 * sflow_summary.log, console), allocate backends, orchestrate, tear down, release, verdict.
 * The summary is written on every path, including failures and Ctrl-C.
 */
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Backend, BackendFactory } from '../backends/backend.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { SflowError } from '../config/errors.js';
import { prepareRunDir } from '../outputs/run-dir.js';
import { collectTaskResult } from '../outputs/results.js';
import { ResultsIndex } from '../outputs/results-index.js';
import { writeLegacyOutputs } from '../outputs/legacy-outputs.js';
import type { BackendType, Plan, PlannedTask } from '../plan/types.js';
import { createProbeDriver } from '../probes/probe-adapter.js';
import { EventBus } from '../reporters/bus.js';
import { CommandLogSink } from '../reporters/command-log.js';
import { ConsoleReporter } from '../reporters/console.js';
import { EventsJsonlSink } from '../reporters/events-jsonl.js';
import { SflowLogSink, parseLogLevel } from '../reporters/sflow-log.js';
import { SummaryLogSink } from '../reporters/summary-log.js';
import { isNotableCall, onExternalCall, onSlowExternalCall } from '../util/bounded-exec.js';
import type { RunEvent, TaskStatus } from './events.js';
import { Orchestrator } from './orchestrator.js';
import type { RunEventInput } from './orchestrator-types.js';
import type { ProbeDriver } from './probe-driver.js';
import { planInfo } from './plan-info.js';
import { runtimeInfo } from './runtime-info.js';
import { installSignalHandlers } from './signals.js';
import { computeVerdict, type Verdict } from './verdict.js';

export interface ExecuteOptions {
  /** task working directory: where sflow was started */
  cwd: string;
  logLevel?: string;
  /** live console output */
  console?: boolean;
  /** echo task output lines on the console (default: same as `console`) */
  taskOutput?: boolean;
  /** install SIGINT/SIGTERM handlers for the duration of the run */
  handleSignals?: boolean;
  /** load warnings the CLI already printed: recorded in sflow.log / events.jsonl, not printed again */
  warnings?: string[];
  onEvent?: (e: RunEvent) => void;
  /** backend constructors by type (default: local only) */
  backendFactories?: Partial<Record<BackendType, BackendFactory>>;
  probes?: ProbeDriver;
  /** TERM → KILL grace (default 5 s) */
  graceMs?: number;
  /** inherited environment of tasks (default process.env) */
  env?: NodeJS.ProcessEnv;
  /** console writers (tests) */
  out?: (s: string) => void;
  err?: (s: string) => void;
  /** uploads of COMPLETED tasks and of the run directory (the CLI passes the S3 uploader) */
  uploads?: (emit: (e: RunEventInput) => void) => RunUploads;
}

/** What the runtime needs from an uploader: a reason when an `on_error: fail` upload failed. */
export interface RunUploads {
  forTask(task: PlannedTask): Promise<string | undefined>;
  uploadAll(): Promise<string | undefined>;
  abort(): void;
  close(): Promise<void>;
}

export interface ExecuteResult extends Verdict {
  runDir: string;
  tasks: Array<[string, TaskStatus]>;
}

const RELEASE_BOUND_MS = 10_000;

function makeBackends(plan: Plan, factories: ExecuteOptions['backendFactories']): Map<string, Backend> {
  const out = new Map<string, Backend>();
  for (const b of plan.backends) {
    const f = factories?.[b.type] ?? (b.type === 'local' ? (p) => new LocalBackend(p) : undefined);
    if (!f) {
      throw new SflowError(
        'run.backend_unavailable',
        `backend '${b.name}' (${b.type}) cannot run in this version of sflow`,
        { phase: 'preflight' },
      );
    }
    out.set(b.name, f(b));
  }
  return out;
}

async function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export async function executePlan(plan: Plan, opts: ExecuteOptions): Promise<ExecuteResult> {
  if (plan.dryRun) throw new Error('executePlan: a dry-run plan cannot be executed');
  const layout = prepareRunDir(plan);
  const bus = new EventBus();
  bus.add(new EventsJsonlSink(layout.eventsJsonl));
  bus.add(new SflowLogSink(layout.sflowLog, parseLogLevel(opts.logLevel)));
  const summary = new SummaryLogSink(layout.summaryLog, { runtime: runtimeInfo() });
  bus.add(summary);
  const cmdLog = new CommandLogSink(plan, opts.cwd);
  bus.add(cmdLog);
  if (opts.console) {
    bus.add(
      new ConsoleReporter({
        taskOutput: opts.taskOutput ?? true,
        out: opts.out,
        err: opts.err,
        shownWarnings: opts.warnings,
      }),
    );
  }
  if (opts.onEvent) bus.add({ emit: opts.onEvent });

  bus.emit({
    type: 'run_started',
    workflow: plan.workflow,
    runId: plan.runId,
    runDir: layout.runDir,
    tasks: plan.tasks.map((t) => t.name),
  });
  bus.emit({ type: 'run_plan', ...planInfo(plan), commandLogs: cmdLog.list() });
  for (const w of opts.warnings ?? []) bus.emit({ type: 'log', level: 'warning', message: w });
  for (const w of plan.warnings) bus.emit({ type: 'log', level: 'warning', message: w });

  const traceFile = resolve(layout.runDir, 'command_trace.jsonl');
  const unsubscribe = [
    onExternalCall((c) => {
      bus.emit({
        type: 'external_call',
        tool: c.tool,
        args: c.args,
        exitCode: c.exitCode,
        durationMs: c.durationMs,
        timedOut: c.timedOut,
        ok: c.ok,
      });
      if (isNotableCall(c)) appendFileSync(traceFile, JSON.stringify(c) + '\n');
    }),
    onSlowExternalCall((w) => {
      bus.emit({
        type: 'log',
        level: 'warning',
        message: `${w.tool} is taking more than ${Math.round(w.elapsedMs / 1000)}s (${w.tool} ${w.args.slice(0, 4).join(' ')}…)`,
      });
    }),
  ];

  const uploads = opts.uploads?.((e) => bus.emit(e));
  const index = new ResultsIndex(layout.runDir, plan.runId);
  const finalize = async (task: PlannedTask) => {
    if (task.result) {
      const r = await collectTaskResult(task, task.result);
      bus.emit({
        type: 'result_parsed',
        task: task.name,
        ok: r.doc.ok,
        values: r.values,
        errors: r.doc.errors,
      });
      if (r.path)
        await index.add(task.name, {
          status: 'COMPLETED',
          ok: r.doc.ok,
          values: r.doc.values,
          resultPath: r.path,
        });
    }
    if (task.outputs && task.outputs.length > 0) {
      const o = await writeLegacyOutputs(task);
      if (o.warning) bus.emit({ type: 'log', level: 'warning', message: o.warning });
    }
    const failed = task.uploads?.length ? await uploads?.forTask(task) : undefined;
    return failed ? { fail: failed } : undefined;
  };

  let verdict: Verdict;
  let statuses: Array<[string, TaskStatus]> = plan.tasks.map((t) => [t.name, 'PENDING']);
  let backends = new Map<string, Backend>();
  let disposeSignals = () => undefined as void;
  try {
    backends = makeBackends(plan, opts.backendFactories);
    const orch = new Orchestrator({
      plan,
      backends,
      probes: opts.probes ?? createProbeDriver(),
      emit: (e) => bus.emit(e),
      cwd: opts.cwd,
      baseEnv: opts.env,
      finalize,
      graceMs: opts.graceMs,
    });
    // installed before allocation: an interrupt there cancels the run before anything starts
    if (opts.handleSignals)
      disposeSignals = installSignalHandlers((s) => {
        uploads?.abort();
        orch.requestStop(s);
      });
    for (const b of backends.values()) await b.preflight();
    await Promise.all([...backends.values()].map((b) => b.allocate()));
    const outcome = await orch.run();
    statuses = outcome.statuses;
    verdict = computeVerdict(plan.workflow, statuses, outcome.signal);
  } catch (e) {
    const msg = e instanceof SflowError ? e.message : `internal error: ${(e as Error).stack ?? String(e)}`;
    bus.emit({ type: 'log', level: 'error', message: msg });
    verdict = {
      status: 'FAILED',
      exitCode: 1,
      message: `Workflow '${plan.workflow}' failed: ${e instanceof Error ? e.message : String(e)}`,
    };
  } finally {
    disposeSignals();
    for (const u of unsubscribe) u();
  }
  const released = await bounded(
    Promise.allSettled([...backends.values()].map((b) => b.release())),
    RELEASE_BOUND_MS,
  );
  for (const r of released ?? []) {
    if (r.status === 'rejected')
      bus.emit({
        type: 'log',
        level: 'warning',
        message: `backend release failed: ${(r.reason as Error).message}`,
      });
  }
  if (!released)
    bus.emit({
      type: 'log',
      level: 'warning',
      message: `backend release did not finish within ${RELEASE_BOUND_MS / 1000}s`,
    });

  await index.flush();
  if (uploads) {
    summary.write(); // the archive carries the summary as it stands now
    const failed = await uploads.uploadAll();
    if (failed && verdict.exitCode === 0)
      verdict = { status: 'FAILED', exitCode: 1, message: `Workflow '${plan.workflow}' failed: ${failed}` };
    await uploads.close();
  }
  bus.emit({
    type: 'run_finished',
    status: verdict.status,
    exitCode: verdict.exitCode,
    message: verdict.message,
  });
  await bus.close();
  return { ...verdict, runDir: layout.runDir, tasks: statuses };
}
