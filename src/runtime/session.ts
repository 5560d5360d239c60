/**
 * One run session (runtime.md 6.1 phases 6–12), in one order on the same backend instances:
 *
 *   create (registry, via the CLI) → preflight(signal) → allocate(signal, progress) → plan on the
 *   reported topology → prepare the run dir → orchestrate → release(signal) → verdict
 *
 * The CLI is the composition root: it hands in the trial plan, how to re-plan on a topology, how
 * to create a backend instance, and the event sinks. This module imports no concrete backend and
 * no reporter. The summary and events are written on every path, failures and Ctrl-C included;
 * every allocated backend is released (bounded) whatever happened after its allocation.
 * A resumed session (`resume`) appends to the same run directory: same run id, its tasks that an
 * earlier session completed pre-settled, `workflow.timeout` counted from this session's start.
 */
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Backend, BackendContext } from '../backends/backend.js';
import { SflowError } from '../util/sflow-error.js';
import { EventBus } from '../events/bus.js';
import type { RunEventInput, RunEventSink, TaskStatus } from '../events/events.js';
import { HandleLedger, ledgerPath } from '../events/handle-ledger.js';
import { prepareRunDir, type TaskFolders } from '../outputs/run-dir.js';
import type { Plan, PlannedBackend, PlannedNode } from '../plan/types.js';
import type { ProbeDriver } from '../probes/probe-driver.js';
import { isNotableCall, onExternalCall, onSlowExternalCall } from '../util/bounded-exec.js';
import { onConsoleLost } from '../util/console-loss.js';
import { errorMessage, errorStack } from '../util/errors.js';
import { allocateAll, preflightAll, releaseAll } from './session-backends.js';
import { makeFinalizer, type RunUploads, type RunUploadsFactory } from './finalize.js';
import { Orchestrator } from './orchestrator.js';
import { planInfo } from './plan-info.js';
import { registerLiveRun } from './live-runs.js';
import { installSignalHandlers } from './signals.js';
import { computeVerdict, signalExitCode, type Verdict } from './verdict.js';
import { WorkflowDeadline } from './deadline.js';
import { Scope } from './scope.js';
import type { ResumeTasks } from './orchestrator-types.js';
import { thisDriver } from './resume.js';
import { processStartTime } from '../util/process-liveness.js';
import type { ResultsIndexEntry } from '../outputs/results-index.js';
import type { CliOptionBag } from '../util/cli-options.js';

export interface SessionOptions {
  /** the plan on placeholder topologies: every plan error already fired; run dir, backends to create */
  trial: Plan;
  /** the real plan on the allocated topology (absent: the trial plan is run as it is) */
  replan?: (topology: Record<string, PlannedNode[]>) => Plan;
  /** creates the instance of a planned backend (the registry's factory) */
  createBackend: (planned: PlannedBackend, ctx: BackendContext) => Backend;
  /** CLI settings handed to every backend (`--wait-for-gpus`, …) */
  backendOptions?: CliOptionBag;
  /** sinks open from the start (the run directory exists) */
  sinks: RunEventSink[];
  /**
   * sinks that need the final plan (command logs, the hardware monitor), and the command log files
   * they write; awaited before any task starts
   */
  planSinks?: (plan: Plan, emit: (e: RunEventInput) => void) => PlanSinks | Promise<PlanSinks>;
  probes: ProbeDriver;
  /** task working directory: where sflow was started */
  cwd: string;
  /** inherited environment of tasks (default process.env) */
  env?: NodeJS.ProcessEnv;
  /** TERM → KILL grace (default 5 s) */
  graceMs?: number;
  /** install SIGINT/SIGTERM handlers for the duration of the session */
  handleSignals?: boolean;
  /** cancels the session like a SIGINT would (embedding callers, tests) */
  signal?: AbortSignal;
  /** load warnings the CLI already printed: recorded by the sinks, not printed again */
  warnings?: string[];
  /** bound of preflight (default 120 s) */
  preflightTimeoutMs?: number;
  /** bound of one batched status call, and unanswered calls before a handle counts as lost */
  pollTimeoutMs?: number;
  lostAfter?: number;
  /**
   * the run's uploader (the CLI's S3 one) when the plan uploads anything: tasks' `uploads:` at
   * completion, `workflow.upload_all` after the run; Ctrl-C aborts what is in flight
   */
  uploads?: RunUploadsFactory;
  /** `sflow run --resume`: the session continues an earlier run in the same run directory */
  resume?: SessionResume;
  /**
   * arms what cleans up after this driver if it dies without its session's end (the CLI's run
   * reaper, cli/run-reaper.ts); returns the disarm, called once the run is finished and recorded
   */
  lifeline?: (runDir: string, graceMs: number | undefined) => Promise<() => void>;
}

/** What a resumed session takes over (decided by runtime/resume.ts from the run's ledger). */
export interface SessionResume {
  tasks: ResumeTasks;
  /** this session's number (2 for the first resume) */
  session: number;
  /** tasks that run again, each with why */
  rerun: Array<{ task: string; why: string }>;
  /** resumed with --force although the recipe or its variables changed */
  forced: boolean;
  /** results.json entries of the reused tasks (kept in the file) */
  results: Record<string, ResultsIndexEntry>;
}

export interface PlanSinks {
  sinks: RunEventSink[];
  commandLogs?: Array<{ family: string; path: string }>;
}

export interface SessionResult extends Verdict {
  runDir: string;
  tasks: Array<[string, TaskStatus]>;
}

/**
 * The session's phases: open its records, watch for interrupts (signals, the lifeline, the
 * deadline), allocate, plan on the topology, orchestrate, then tear down (release, uploads) and
 * close the records, whatever happened before.
 */
export async function runSession(o: SessionOptions): Promise<SessionResult> {
  const s = openSession(o);
  // installed before preflight: an interrupt while allocating cancels the run before anything starts
  const disposeSignals = watchInterrupts(s);
  // armed once the signal handlers are in: a hang-up while the reaper starts is handled too
  const disarm = await armLifeline(o, s.runDir, s.bus);
  const deadline = armDeadline(s);
  let verdict: Verdict;
  try {
    await planOnTopology(s, await allocate(s));
    verdict = await orchestrate(s, deadline);
  } catch (e) {
    verdict = failedVerdict(s, deadline, e);
  } finally {
    s.scope.dispose();
    disposeSignals();
    stopWatchingRun(s);
  }
  verdict = await teardown(s, verdict);
  return closeSession(s, verdict, disarm);
}

/** What the phases of one session share: made by `openSession`, filled in as the run goes. */
interface SessionState {
  o: SessionOptions;
  trial: Plan;
  runDir: string;
  bus: EventBus;
  /** the run's uploader: exists from the start, so upload_all archives a failed allocation too */
  uploads: RunUploads | undefined;
  /**
   * the run's scope: allocation, planning and the orchestrator run under it; a signal or the
   * deadline cancels it (a second signal forces), fail-fast cancels it, the orchestrator ends it
   */
  scope: Scope;
  finalizer: ReturnType<typeof makeFinalizer>;
  backends: Map<string, Backend>;
  /** the plan being run: the trial plan until the allocated topology replans it */
  plan: Plan;
  statuses: Array<[string, TaskStatus]>;
  ledger?: HandleLedger;
  /** the handle ledger's first write failure (it fails the run) */
  ledgerError?: string;
  folders?: TaskFolders;
  /** what `stopWatchingRun` and `closeSession` undo */
  unregister: () => void;
  unwatchConsole: () => void;
  unsubscribe: Array<() => void>;
}

/** Opens the run's records: the bus with its first sinks, run_started, the live-run index, traces. */
function openSession(o: SessionOptions): SessionState {
  const trial = o.trial;
  if (trial.dryRun) throw new Error('runSession: a dry-run plan cannot be executed');
  const runDir = trial.paths.runDir;
  const bus = new EventBus();
  for (const sink of o.sinks) bus.add(sink);
  bus.emit({
    type: 'run_started',
    workflow: trial.workflow,
    runId: trial.runId,
    runDir,
    tasks: trial.tasks.map((t) => t.name),
    driver: thisDriver(processStartTime(process.pid)),
    ...(o.resume
      ? {
          session: o.resume.session,
          resume: {
            reused: o.resume.tasks.reused.size,
            rerun: o.resume.rerun.map((r) => r.task),
            forced: o.resume.forced,
          },
        }
      : {}),
  });
  for (const w of o.warnings ?? []) bus.emit({ type: 'log', level: 'warning', message: w });
  const unregister = registerRun(trial, bus);
  // a closed pipe or a hung-up terminal silences the console; the run goes on (sflow.log says so)
  const unwatchConsole = onConsoleLost((why) =>
    bus.emit({
      type: 'log',
      level: 'warning',
      message: `the console went away (${why}): nothing more is printed there; the run goes on and its files say how it ends`,
    }),
  );
  const unsubscribe = traceExternalCalls(bus, resolve(runDir, 'command_trace.jsonl'));
  // storage, upload_all and the run paths do not depend on the allocation
  const uploads: RunUploads | undefined = o.uploads?.(trial, (e) => bus.emit(e));
  return {
    o,
    trial,
    runDir,
    bus,
    uploads,
    scope: Scope.root('run'),
    finalizer: makeFinalizer(
      runDir,
      trial.runId,
      (e) => bus.emit(e),
      () => uploads,
    ),
    backends: new Map(),
    plan: trial,
    statuses: trial.tasks.map((t) => [t.name, 'PENDING']),
    unregister,
    unwatchConsole,
    unsubscribe,
  };
}

/**
 * SIGINT/SIGTERM (when the session handles them) and the caller's AbortSignal cancel the run's
 * scope; one after the first forces. Returns the disposer.
 */
function watchInterrupts(s: SessionState): () => void {
  const { o, bus, scope } = s;
  const onSignal = (sig: string): void => {
    s.uploads?.abort();
    bus.emit({ type: 'signal', signal: sig, count: scope.requests + 1 });
    scope.cancel({ kind: 'signal', signal: sig });
  };
  const disposeHandlers = o.handleSignals ? installSignalHandlers(onSignal) : () => undefined;
  const onAbort = () => onSignal('SIGINT');
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    disposeHandlers();
    o.signal?.removeEventListener('abort', onAbort);
  };
}

/** workflow.timeout, counted from here (allocation included): cancels the run's scope. */
function armDeadline(s: SessionState): WorkflowDeadline {
  const deadline = new WorkflowDeadline(s.trial.workflowTimeoutS);
  s.scope.deadline(
    deadline.ms,
    () => ({ kind: 'deadline', reason: deadline.cancelReason }),
    () => {
      s.bus.emit({ type: 'log', level: 'error', message: deadline.message() });
    },
  );
  return deadline;
}

/** Creates every planned backend, preflights them and allocates; returns the reported topology. */
async function allocate(s: SessionState): Promise<Record<string, PlannedNode[]>> {
  const { o, trial, bus } = s;
  const gpuTasks = new Set(trial.tasks.filter((t) => t.resources?.gpus !== undefined).map((t) => t.backend));
  for (const b of trial.backends) {
    s.backends.set(
      b.name,
      o.createBackend(b, {
        runId: trial.runId,
        runDir: s.runDir,
        log: (message, level = 'warning') => bus.emit({ type: 'log', level, message }),
        options: o.backendOptions ?? {},
        env: o.env ?? process.env,
        gpuTasks: gpuTasks.has(b.name),
        artifacts: trial.artifacts,
        ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
      }),
    );
  }
  await preflightAll(s.backends, s.scope.signal, o.preflightTimeoutMs ?? 120_000);
  return allocateAll(s.backends, s.scope.signal, (e) => bus.emit(e));
}

/**
 * The real plan on the allocated topology: task folders, the sinks that need the plan (awaited
 * before any task starts), run_plan and the plan's warnings; a resumed run seeds its results.
 */
async function planOnTopology(s: SessionState, topology: Record<string, PlannedNode[]>): Promise<void> {
  const { o, bus } = s;
  const plan = o.replan ? o.replan(topology) : s.trial;
  s.plan = plan;
  s.folders = prepareRunDir(plan).folders;
  const late = await o.planSinks?.(plan, (e) => bus.emit(e));
  s.scope.signal.throwIfAborted();
  for (const sink of late?.sinks ?? []) bus.add(sink);
  bus.emit({
    type: 'run_plan',
    ...planInfo(plan),
    ...(late?.commandLogs ? { commandLogs: late.commandLogs } : {}),
  });
  for (const w of plan.warnings) bus.emit({ type: 'log', level: 'warning', message: w });
  if (o.resume) {
    await s.finalizer.seed(o.resume.results);
    for (const r of o.resume.rerun)
      bus.emit({ type: 'log', level: 'info', message: `resume: ${r.task} runs again (${r.why})` });
  }
}

/** Runs the DAG under the orchestrator, writing the handle ledger; the verdict of its outcome. */
async function orchestrate(s: SessionState, deadline: WorkflowDeadline): Promise<Verdict> {
  const { o, plan, bus } = s;
  const book = new HandleLedger(ledgerPath(s.runDir));
  s.ledger = book;
  let ledgerFailed = false;
  const orch = new Orchestrator({
    plan,
    backends: s.backends,
    probes: o.probes,
    emit: (e) => bus.emit(e),
    cwd: o.cwd,
    baseEnv: o.env,
    finalize: (t, cancelled) => s.finalizer.finalize(t, cancelled),
    graceMs: o.graceMs,
    pollTimeoutMs: o.pollTimeoutMs,
    lostAfter: o.lostAfter,
    resume: o.resume?.tasks,
    scope: s.scope,
    taskFolder: (name) => s.folders?.ensure(name),
    ledger: (op, h) => {
      const err = book.write(op, h);
      if (err && !ledgerFailed) {
        ledgerFailed = true;
        s.ledgerError = `${book.path}: ${err.message}`;
        bus.emit({ type: 'log', level: 'warning', message: `handle ledger ${book.path}: ${err.message}` });
      }
    },
  });
  const outcome = await orch.run();
  s.statuses = outcome.statuses;
  return deadline.verdict(
    deadlineStopped(s),
    plan.workflow,
    computeVerdict(plan.workflow, s.statuses, outcome.signal),
    s.statuses,
  );
}

/** The verdict of a session that threw before its outcome (an interrupt, the deadline, an error). */
function failedVerdict(s: SessionState, deadline: WorkflowDeadline, e: unknown): Verdict {
  const { plan, statuses } = s;
  const cause = s.scope.cause;
  const signalName = cause?.kind === 'signal' ? cause.signal : undefined;
  const msg = e instanceof SflowError ? e.message : `internal error: ${errorStack(e)}`;
  if (!(s.scope.signal.aborted && (signalName || deadlineStopped(s))))
    s.bus.emit({ type: 'log', level: 'error', message: msg });
  const verdict: Verdict = signalName
    ? { ...computeVerdict(plan.workflow, statuses, signalName), exitCode: signalExitCode(signalName) ?? 1 }
    : { status: 'FAILED', exitCode: 1, message: `Workflow '${plan.workflow}' failed: ${errorMessage(e)}` };
  return deadline.verdict(deadlineStopped(s), plan.workflow, verdict, statuses);
}

/** the workflow deadline is what stopped the run (the run's scope says why it stopped) */
function deadlineStopped(s: SessionState): boolean {
  return s.scope.cause?.kind === 'deadline';
}

/** The run is over: no more external-call traces or ledger rows; every task has its folder and log. */
function stopWatchingRun(s: SessionState): void {
  for (const u of s.unsubscribe) u();
  s.ledger?.close();
  // runtime.md 8.3: by the end of the run every task has its folder and log (cancelled ones too)
  for (const err of s.folders?.ensureAll() ?? []) s.bus.emit({ type: 'log', level: 'warning', message: err });
}

/** Releases every allocated backend (bounded), flushes results.json and runs upload_all. */
async function teardown(s: SessionState, verdict: Verdict): Promise<Verdict> {
  await releaseAll(s.backends, s.scope, (e) => s.bus.emit(e));
  await s.finalizer.flush();
  if (!s.uploads) return verdict;
  s.bus.checkpoint(); // the archive carries the summary as it stands now
  const failed = await s.uploads.uploadAll();
  await s.uploads.close();
  return failed && verdict.exitCode === 0
    ? { status: 'FAILED', exitCode: 1, message: `Workflow '${s.plan.workflow}' failed: ${failed}` }
    : verdict;
}

/** Counts failed records in the verdict, writes run_finished and closes the bus and the run's index entries. */
async function closeSession(s: SessionState, verdict: Verdict, disarm: () => void): Promise<SessionResult> {
  const { bus, ledgerError } = s;
  // a disk that already failed a record: the summary writes what it holds now, so that its own
  // failure is counted in the verdict the console prints (not only found while closing)
  if (bus.errors.length > 0 || ledgerError) bus.checkpoint();
  const recordErrors = [...bus.errors, ...(ledgerError ? [ledgerError] : [])];
  const recorded = withRecordFailures(verdict, recordErrors);
  bus.emit({
    type: 'run_finished',
    status: recorded.status,
    exitCode: recorded.exitCode,
    message: recorded.message,
  });
  s.unwatchConsole();
  await bus.close();
  s.unregister();
  disarm();
  // a record that failed only while closing (the summary's last write) still fails the run, and
  // is counted with the others
  const final = withRecordFailures(verdict, [...new Set([...recordErrors, ...bus.errors])]);
  return { ...final, runDir: s.runDir, tasks: s.statuses };
}

/**
 * A run whose records could not all be written (a full disk, EIO, a read-only folder) does not end
 * with exit code 0 even if every task completed: its ledger is incomplete.
 */
function withRecordFailures(v: Verdict, errors: string[]): Verdict {
  if (errors.length === 0 || v.exitCode !== 0) return v;
  return {
    ...v,
    exitCode: 1,
    message: `Workflow completed, but ${errors.length} of its record file(s) could not be written (${errors.join('; ')})`,
  };
}

/** The run in the index of live runs (found by `sflow recover` if this driver is lost). */
function registerRun(plan: Plan, bus: EventBus): () => void {
  try {
    return registerLiveRun({ runId: plan.runId, workflow: plan.workflow, runDir: plan.paths.runDir });
  } catch (e) {
    bus.emit({
      type: 'log',
      level: 'warning',
      message: `this run is not in the index of live runs (${errorMessage(e)}): if its driver is killed, run \`sflow recover ${plan.paths.runDir}\``,
    });
    return () => undefined;
  }
}

/** The session's lifeline (the run reaper); a failure to arm it is a warning naming the fallback. */
async function armLifeline(o: SessionOptions, runDir: string, bus: EventBus): Promise<() => void> {
  if (!o.lifeline) return () => undefined;
  try {
    return await o.lifeline(runDir, o.graceMs);
  } catch (e) {
    bus.emit({
      type: 'log',
      level: 'warning',
      message: `no reaper for this run (${errorMessage(e)}): if its driver is killed, run \`sflow recover ${runDir}\``,
    });
    return () => undefined;
  }
}

/** external_call events for every bounded external call, a trace row for the notable ones. */
function traceExternalCalls(bus: EventBus, traceFile: string): Array<() => void> {
  return [
    onExternalCall((c) => {
      bus.emit({
        type: 'external_call',
        tool: c.tool,
        args: c.args,
        exitCode: c.exitCode,
        durationMs: c.durationMs,
        timedOut: c.timedOut,
        ok: c.ok,
        ...(c.expected ? { expected: true as const } : {}),
        ...(!c.ok ? { error: failureText(c.stderrTail ?? c.errorCode ?? '') } : {}),
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
}

/**
 * One line that says why a call failed: an API error's JSON `message` where there is one (the
 * Kubernetes client puts the status body in its error), else the last line that is not a warning.
 */
function failureText(tail: string): string {
  // the body may be JSON inside JSON (the client stringifies the raw text): its quotes escaped
  const message = /"message":"((?:[^"\\]|\\.)*)"/.exec(tail.replace(/\\"/g, '"'))?.[1];
  const line =
    message ??
    tail
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^WARNING:/i.test(l))
      .at(-1) ??
    '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
