/**
 * Runs that lost their driver (SIGKILL, a crash, a power cut): found in the index of live runs
 * (runtime/live-runs.ts) or named by their folder, their handle ledger (`handles.jsonl`) read, what
 * is left of their attempts stopped through each backend's `recover`, and the run marked as ended
 * by a lost driver: unfinished tasks CANCELLED, the run FAILED, appended to `events.jsonl` and
 * `sflow.log`, `sflow_summary.log` re-rendered from the whole event stream. Used by `sflow run`
 * (before it starts anything) and by `sflow recover`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BackendContext, RecoverOutcome } from '../backends/backend.js';
import type { BackendKind } from '../backends/kind.js';
import { BACKEND_KINDS } from '../backends/registry.js';
import { EventBus } from '../events/bus.js';
import type { RunEvent, RunEventInput } from '../events/events.js';
import { HandleLedger, ledgerPath, readHandleLedger } from '../events/handle-ledger.js';
import type { TaskHandle } from '../events/handle.js';
import { runDirLayout } from '../outputs/run-dir.js';
import type { PlannedBackend } from '../plan/types.js';
import { EventsJsonlSink } from '../reporters/events-jsonl.js';
import { SflowLogSink } from '../reporters/sflow-log.js';
import { SummaryLogSink } from '../reporters/summary-log.js';
import { forgetLiveRun, lostRuns, type LiveRunEntry } from '../runtime/live-runs.js';
import { runtimeInfo } from '../runtime/runtime-info.js';
import { DEFAULT_GRACE_MS } from '../util/process-group.js';
import { errorMessage } from '../util/errors.js';
import { lockRunDir, type RunLock } from './run-lock.js';
import { escapeControls } from '../util/ansi.js';
import type { CliOptionBag } from '../util/cli-options.js';

export interface RecoveredAttempt {
  handle: TaskHandle;
  outcome?: RecoverOutcome;
  error?: string;
}

export interface RecoveryReport {
  runDir: string;
  driver?: LiveRunEntry;
  attempts: RecoveredAttempt[];
  /** the run's events ended without run_finished: it was marked as ended by a lost driver */
  marked: boolean;
  /** what each backend type's run-level `recoverRun` did, prefixed with the type */
  runLevel: string[];
  problems: string[];
  /** a backend type says a driver of this run still runs: nothing was touched */
  liveDriver?: string;
  /** a handle or a run-level recovery failed */
  failed: boolean;
}

export interface RecoverOptions {
  driver?: LiveRunEntry;
  graceMs?: number;
  /** the CLI options, handed to every kind's `recoverRun` (e.g. --kubeconfig) */
  options?: CliOptionBag;
  /** the backend kinds asked (default: every registered one) */
  kinds?: readonly BackendKind[];
  env?: NodeJS.ProcessEnv;
}

const RUN_LEVEL_TIMEOUT_MS = 120_000;

/** The first registered kind that names a driver of the run still running, as a sentence. */
export function liveDriverOf(runDir: string, kinds: readonly BackendKind[]): string | undefined {
  for (const k of kinds) {
    const d = k.liveDriver?.(runDir);
    if (d) return `${k.type}: ${d}`;
  }
  return undefined;
}

/** Events of a run, tolerating a torn last line (a driver killed mid-write). */
export function readRunEvents(runDir: string): RunEvent[] {
  const file = runDirLayout(runDir).eventsJsonl;
  if (!existsSync(file)) return [];
  const out: RunEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as RunEvent);
    } catch {
      // torn line
    }
  }
  return out;
}

function recoverer(h: TaskHandle, runDir: string, kinds: readonly BackendKind[]) {
  const kind = kinds.find((k) => k.type === h.type);
  if (!kind?.create) return undefined;
  // a recovered backend has no recipe entry: its kind reads defaults from an empty one
  const planned = {
    name: h.backend,
    type: h.type,
    isDefault: false,
    placeholder: false,
    nodes: [],
    config: {},
    capabilities: kind.capabilities,
  } as unknown as PlannedBackend;
  const ctx: BackendContext = {
    runId: `recover-${h.runId}`,
    runDir,
    log: () => undefined,
    options: {},
    env: process.env,
    gpuTasks: false,
  };
  return kind.create(planned, ctx);
}

/** Stops what is left of a run's attempts and marks the run as ended by a lost driver. */
export async function recoverRun(runDir: string, o: RecoverOptions = {}): Promise<RecoveryReport> {
  const kinds = o.kinds ?? Object.values(BACKEND_KINDS);
  await Promise.all(kinds.map(async (k) => k.load?.())); // liveDriver, create and recoverRun need them
  const report: RecoveryReport = {
    runDir,
    driver: o.driver,
    attempts: [],
    marked: false,
    runLevel: [],
    problems: [],
    failed: false,
  };
  let lock: RunLock;
  try {
    lock = lockRunDir(runDir, 'sflow recover', 'cannot recover');
  } catch (e) {
    // a resume or another recovery drives it now
    report.liveDriver = errorMessage(e);
    return report;
  }
  try {
    report.liveDriver = liveDriverOf(runDir, kinds);
    if (report.liveDriver) return report;
    await recoverHandles(runDir, kinds, o, report);
  } finally {
    lock.release();
  }
  return report;
}

/** Stops what is left of the run's attempts, the run-level leftovers, and marks the run. */
async function recoverHandles(
  runDir: string,
  kinds: readonly BackendKind[],
  o: RecoverOptions,
  report: RecoveryReport,
): Promise<void> {
  const ledgerFile = ledgerPath(runDir);
  const { open, skipped } = readHandleLedger(ledgerFile);
  if (skipped) report.problems.push(`${skipped} unreadable line(s) in ${ledgerFile}`);
  const ledger = new HandleLedger(ledgerFile);
  try {
    await Promise.all(
      open.map(async (handle) => {
        const a: RecoveredAttempt = { handle };
        report.attempts.push(a);
        try {
          const b = recoverer(handle, runDir, kinds);
          if (!b) throw new Error(`backend type '${handle.type}' cannot be reached by this version`);
          a.outcome = await b.recover(
            handle,
            { graceMs: o.graceMs ?? DEFAULT_GRACE_MS },
            AbortSignal.timeout(60_000),
          );
          if (!a.outcome.found || a.outcome.stop?.gone) ledger.write('ended', { ...handle, state: 'EXITED' });
        } catch (e) {
          a.error = errorMessage(e);
        }
      }),
    );
  } finally {
    ledger.close();
  }
  await recoverRunLevel(runDir, kinds, o, report);
  report.failed ||= report.attempts.some((a) => a.error || (a.outcome?.found && !a.outcome.stop?.gone));
  const events = readRunEvents(runDir);
  // the last session (a --resume appends one) started and never finished
  const lastStart = events.findLastIndex((e) => e.type === 'run_started');
  if (lastStart >= 0 && !events.slice(lastStart).some((e) => e.type === 'run_finished')) {
    await markLost(runDir, events, lastStart, report);
    report.marked = true;
  }
}

/** Every kind's run-level leftovers (allocations, pods, …) after the handles. */
async function recoverRunLevel(
  runDir: string,
  kinds: readonly BackendKind[],
  o: RecoverOptions,
  report: RecoveryReport,
): Promise<void> {
  for (const k of kinds) {
    if (!k.recoverRun) continue;
    try {
      const lines = await k.recoverRun(runDir, {
        env: o.env ?? process.env,
        signal: AbortSignal.timeout(RUN_LEVEL_TIMEOUT_MS),
        options: o.options ?? {},
      });
      for (const l of lines) report.runLevel.push(`${k.type}: ${l}`);
    } catch (e) {
      report.failed = true;
      report.problems.push(`${k.type}: run-level recovery failed: ${errorMessage(e)}`);
    }
  }
}

function describeDriver(d: LiveRunEntry | undefined): string {
  return d ? `pid ${d.pid} on ${d.host}, started ${d.startedAt}` : 'its driver is not running';
}

/** Appends the lost-driver ending to the run's ledgers and re-renders its summary. */
async function markLost(
  runDir: string,
  events: RunEvent[],
  lastStart: number,
  report: RecoveryReport,
): Promise<void> {
  const layout = runDirLayout(runDir);
  const started = events[lastStart];
  const workflow = started?.type === 'run_started' ? started.workflow : 'workflow';
  const tasks = started?.type === 'run_started' ? started.tasks : [];
  const attempt = new Map<string, number>();
  const done = new Set<string>();
  for (const e of events.slice(lastStart)) {
    if ('task' in e && typeof e.task === 'string' && 'attempt' in e && typeof e.attempt === 'number')
      attempt.set(e.task, e.attempt);
    if (e.type === 'task_finished' || e.type === 'task_reused') done.add(e.task);
  }
  const summary = new SummaryLogSink(layout.summaryLog, { runtime: runtimeInfo() });
  for (const e of events) summary.model.apply(e);
  const bus = new EventBus()
    .add(new EventsJsonlSink(layout.eventsJsonl))
    .add(new SflowLogSink(layout.sflowLog))
    .add(summary);
  const stopped = report.attempts.filter((a) => a.outcome?.found).length;
  for (const l of report.runLevel) bus.emit({ type: 'log', level: 'warning', message: `recovered ${l}` });
  const reason = `driver lost (${describeDriver(report.driver)})`;
  const emit = (e: RunEventInput) => bus.emit(e);
  emit({
    type: 'log',
    level: 'error',
    message: `The driver of this run was lost (${describeDriver(report.driver)}): it ended without cleaning up. Recovered by pid ${process.pid}: ${stopped} attempt(s) still running were stopped, ${report.attempts.length - stopped} were already gone.`,
  });
  for (const t of tasks) {
    if (done.has(t)) continue;
    emit({
      type: 'task_finished',
      task: t,
      attempt: attempt.get(t) ?? 1,
      status: 'CANCELLED',
      exitCode: null,
      reason,
    });
  }
  emit({
    type: 'run_finished',
    status: 'FAILED',
    exitCode: 1,
    message: `Workflow '${workflow}' ended by a lost driver (${describeDriver(report.driver)})`,
  });
  await bus.close();
}

/** Every run of this user on this machine whose driver is gone, recovered and marked. */
export async function recoverLostRuns(o: Omit<RecoverOptions, 'driver'> = {}): Promise<RecoveryReport[]> {
  const out: RecoveryReport[] = [];
  for (const r of lostRuns()) {
    const rep = await recoverRun(resolve(r.entry.runDir), { ...o, driver: r.entry });
    out.push(rep);
    // kept in the index while another driver of it lives (asked again next time)
    if (!rep.liveDriver) forgetLiveRun(r.file);
  }
  return out;
}

/**
 * One line per recovered run, for the console. Names come from the run's own files (a ledger a
 * task may have edited): control characters are shown escaped, never sent to the terminal.
 */
export function describeRecovery(r: RecoveryReport): string[] {
  return describeRecoveryLines(r).map(escapeControls);
}

function describeRecoveryLines(r: RecoveryReport): string[] {
  if (r.liveDriver) return [`run ${r.runDir}: not recovered, a driver of it still runs (${r.liveDriver})`];
  const stopped = r.attempts.filter((a) => a.outcome?.found);
  const counts = `${stopped.length} leftover attempt(s) stopped, ${r.attempts.length - stopped.length} already gone`;
  const lines = [
    r.marked
      ? `run ${r.runDir} lost its driver (${describeDriver(r.driver)}): ${counts}; its summary now says so`
      : r.attempts.length === 0 && r.runLevel.length === 0
        ? `run ${r.runDir}: nothing left to recover (its events already end with the run's end)`
        : `run ${r.runDir} (its events already end with the run's end): ${counts}`,
  ];
  for (const a of r.attempts) {
    const what = `${a.handle.task}#${a.handle.attempt}`;
    if (a.error) lines.push(`  ${what}: not recovered: ${a.error}`);
    else if (a.outcome?.found) lines.push(`  ${what}: ${a.outcome.detail}`);
  }
  for (const l of r.runLevel) lines.push(`  ${l}`);
  for (const p of r.problems) lines.push(`  ${p}`);
  return lines;
}
