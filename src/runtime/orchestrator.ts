/**
 * The run engine (runtime.md 6.2–6.7): an event-driven task state machine. There is no tick:
 * a task is submitted the moment its last dependency becomes COMPLETED or READY, and every
 * transition is announced on the event stream. Attempts are followed through the backends'
 * batched status (handle-watch.ts); every handle change goes to the run's handle ledger.
 *
 *   PENDING → SUBMITTED → RUNNING → (READY) → COMPLETED | FAILED | CANCELLED,
 *   RUNNING/READY → PENDING on a retry. SUBMITTED lasts while the attempt waits in the engine's
 *   queue (a local process is RUNNING at once). The first FAILED task triggers workflow-level fail-fast (everything not finished
 *   becomes CANCELLED, READY included — but a task that already exited 0 finishes its
 *   finalisation, uploads included, and ends COMPLETED); when every task is settled (READY
 *   counts) the services are stopped and their status stays READY.
 *
 * A resumed session (`o.resume`) starts with the tasks an earlier session completed pre-settled
 * as COMPLETED (announced as `task_reused`, never launched, their dependents free to start) and
 * every other task's attempt numbers continuing after the earlier ones (retries count afresh).
 */
import { setMaxListeners } from 'node:events';
import type { ExitStatus, HandleStatus, TaskHandle } from '../backends/backend.js';
import type { PlannedProbe } from '../plan/types.js';
import type { TaskStatus } from '../events/events.js';
import { raceAbort } from '../util/abort.js';
import { errorMessage } from '../util/errors.js';
import { applyHandleStatus, launchRequest, pollErrorReporter } from './attempt-handles.js';
import { HandleWatch } from './handle-watch.js';
import type { OrchestratorOptions, OrchestratorOutcome } from './orchestrator-types.js';
import type { ProbeContext } from '../probes/probe-driver.js';
import { finalReadinessCheck, startTaskProbes, stopTaskProbes } from './task-probes.js';
import { canRetry, retryDelayS, totalAttempts } from './retry.js';
import {
  buildTaskTable,
  definedEnv,
  finishedEvent,
  isDone,
  isSettled,
  type FailKind,
  type FinalizeFailure,
  type TaskRt,
} from './task-state.js';
import { killAll, stopAndReport, stopTargets } from './teardown.js';
import { Scope, type CancelCause } from './scope.js';
import { failFastMessage, launchFailure } from './messages.js';

export type { OrchestratorOptions, OrchestratorOutcome } from './orchestrator-types.js';
export type { RunEventInput } from '../events/events.js';

/** default bound of one backend `taskReady` call */
const TASK_READY_TIMEOUT_MS = 30_000;

export class Orchestrator {
  private readonly tasks = new Map<string, TaskRt>();
  /** pre-settled by a resume: taken over from an earlier session, never launched */
  private readonly reusedAs = new Map<TaskRt, 'COMPLETED' | 'READY'>();
  private readonly order: TaskRt[];
  private readonly launches = new Set<Promise<void>>();
  /** backend `taskReady` calls in flight (each bounded; the teardown waits for them) */
  private readonly readies = new Set<Promise<void>>();
  /** tasks that exited 0 and are in their finalisation (results, assertions, uploads) */
  private readonly finalizations = new Map<TaskRt, { done: Promise<void>; cancel: AbortController }>();
  private unsettled = 0;
  /** the run's scope: its cause is why the run stops (`end` when it finished on its own) */
  private readonly scope: Scope;
  private signalName: string | undefined;
  private teardownP: Promise<void> | undefined;
  private resolveDone!: () => void;
  private readonly done = new Promise<void>((r) => (this.resolveDone = r));
  private readonly graceMs: number;
  private readonly baseEnv: Record<string, string>;
  private readonly watch: HandleWatch;
  constructor(private readonly o: OrchestratorOptions) {
    this.scope = o.scope ?? Scope.root('orchestrate');
    // every launch in flight and every stop listens to these: many listeners are intended
    setMaxListeners(0, this.scope.signal, this.scope.forced);
    this.graceMs = o.graceMs ?? 5_000;
    this.baseEnv = definedEnv(o.baseEnv ?? process.env);
    this.order = buildTaskTable(o.plan.tasks, o.backends, this.tasks);
    this.unsettled = this.order.length;
    for (const t of this.order) {
      t.attemptBase = t.attempt = o.resume?.attempts.get(t.plan.name) ?? 0;
      const r = o.resume?.reused.get(t.plan.name);
      if (!r) continue;
      t.attempt = Math.max(t.attempt, r.attempt);
      this.reusedAs.set(t, r.status);
      this.setStatus(t, 'COMPLETED'); // done for this session (never cancelled, never stopped)
    }
    this.watch = new HandleWatch({
      pollTimeoutMs: o.pollTimeoutMs,
      lostAfter: o.lostAfter,
      onStatus: (h, s) => this.onStatus(h, s),
      onPollError: pollErrorReporter(o.emit),
    });
  }

  /** Runs to the end (including teardown). */
  async run(): Promise<OrchestratorOutcome> {
    const unlisten = [
      this.scope.onCancel((c) => this.stopFor(c)),
      this.scope.onForce((c) => this.forceStop(c)),
    ];
    for (const b of new Set(this.order.map((t) => t.backend))) this.watch.attach(b);
    for (const [t, status] of this.reusedAs)
      this.o.emit({ type: 'task_reused', task: t.plan.name, attempt: t.attempt, status });
    for (const t of this.reusedAs.keys()) this.satisfy(t);
    for (const t of this.order) if (t.unmet === 0) this.submit(t);
    this.maybeFinish();
    await this.done;
    for (const u of unlisten) u();
    await this.watch.close();
    return { statuses: this.order.map((t) => [t.plan.name, t.status]), signal: this.signalName };
  }

  status(name: string): TaskStatus | undefined {
    return this.tasks.get(name)?.status;
  }

  /** SIGINT/SIGTERM: the first cancels everything, a second one kills at once. */
  requestStop(signal: string): void {
    this.o.emit({ type: 'signal', signal, count: this.scope.requests + 1 });
    this.scope.cancel({ kind: 'signal', signal });
  }

  /** the run is stopping (or stopped): no new launches, no new transitions out of the stop */
  private get stopping(): boolean {
    return this.scope.cause !== undefined;
  }

  /** The scope was cancelled: stop the run for its cause. */
  private stopFor(c: CancelCause): void {
    switch (c.kind) {
      case 'signal':
        this.signalName = c.signal;
        this.cancelAll(`cancelled by ${c.signal}`);
        void this.teardown('signal');
        return;
      case 'deadline':
      case 'bound':
        this.cancelAll(c.reason);
        void this.teardown('cancel');
        return;
      case 'fail_fast':
        this.cancelAll(c.reason, true);
        void this.teardown('fail_fast');
        return;
      default: {
        const unknownCause: never = c;
        throw new Error(`unknown stop cause ${JSON.stringify(unknownCause)}`);
      }
    }
  }

  /** A signal while the run was already stopping (or ending): no more grace. */
  private forceStop(c: CancelCause): void {
    if (c.kind === 'signal' && this.scope.cause?.kind !== 'end') this.signalName ??= c.signal;
    void killAll(stopTargets(this.order));
  }

  // ---------------------------------------------------------------- transitions

  private setStatus(t: TaskRt, s: TaskStatus): void {
    const was = isSettled(t.status);
    t.status = s;
    const now = isSettled(s);
    if (was && !now) this.unsettled++;
    else if (!was && now) this.unsettled--;
  }

  private submit(t: TaskRt): void {
    if (this.stopping || t.status !== 'PENDING' || t.launching) return;
    t.attempt++;
    t.launching = true;
    t.engineStart = t.engineEnd = undefined;
    const attempt = t.attempt;
    this.setStatus(t, 'SUBMITTED');
    const gatedOn = t.plan.colocated?.gatedOn;
    this.o.emit({
      type: 'task_submitted',
      task: t.plan.name,
      attempt,
      ...(gatedOn?.length ? { gatedOn } : {}),
    });
    const p = this.launch(t, attempt).finally(() => this.launches.delete(p));
    this.launches.add(p);
  }

  private async launch(t: TaskRt, attempt: number): Promise<void> {
    let handle: TaskHandle;
    const req = launchRequest(t, attempt, {
      baseEnv: this.baseEnv,
      cwd: this.o.cwd,
      runDir: this.o.plan.paths.runDir,
      ledger: this.o.ledger,
    });
    try {
      this.o.taskFolder?.(t.plan.name);
      handle = await t.backend.launch(req, this.scope.signal);
    } catch (e) {
      t.launching = false;
      if (t.status !== 'SUBMITTED' || this.stopping) return;
      const f = launchFailure(e);
      // a transient start failure (ETXTBSY, EAGAIN, an engine's 5xx or timeout) takes the task's retries
      if (f.retryable && canRetry(t.plan.retries, attempt - t.attemptBase))
        this.retry(t, attempt, { code: null, signal: null }, f.reason);
      else this.fail(t, f.kind, f.reason);
      return;
    }
    t.launching = false;
    t.handles.push(handle);
    req.record(handle); // a backend that did not record it; repeats are not written twice
    if (this.stopping || t.status !== 'SUBMITTED') return; // cancelled meanwhile: teardown stops it
    t.handle = handle;
    this.watch.add(t.backend, handle);
    // a handle born RUNNING (a local process) started when it was submitted
    if (handle.state === 'RUNNING') this.running(t, attempt, handle, Date.parse(handle.submittedAt));
    this.foldersAhead(t);
  }

  /**
   * While `t` runs, the folders of the tasks it may free next: made now, they are off the path from
   * its exit to their launch. A failure here is left for their own launch to report.
   */
  private foldersAhead(t: TaskRt): void {
    if (!this.o.taskFolder) return;
    for (const d of t.dependents) {
      try {
        this.o.taskFolder(d.plan.name);
      } catch {
        // reported when `d` is launched (the same call, the same error)
      }
    }
  }

  /** `at`: when the engine says the attempt started (absent: it did not say) */
  private running(t: TaskRt, attempt: number, handle: TaskHandle, at: number | undefined): void {
    t.startedAt = Date.now();
    if (at !== undefined && Number.isFinite(at)) t.engineStart = at;
    this.setStatus(t, 'RUNNING');
    this.o.emit({
      type: 'task_started',
      task: t.plan.name,
      attempt,
      pid: handle.process?.pid,
      handle,
      ...(t.engineStart !== undefined ? { at: t.engineStart } : {}),
    });
    this.startProbes(t, attempt);
  }

  /** A batched status answer about one handle (any attempt of any task). */
  private onStatus(handle: TaskHandle, s: HandleStatus): void {
    const t = this.tasks.get(handle.task);
    if (!t) return;
    applyHandleStatus(handle, s, this.o.ledger, this.o.emit);
    const current = t.handle === handle && t.attempt === handle.attempt;
    if (s.state === 'RUNNING' && current && t.status === 'SUBMITTED' && !this.stopping)
      this.running(t, handle.attempt, handle, s.startedAt);
    if (s.state !== 'EXITED' || !current) return;
    if (s.endedAt !== undefined && Number.isFinite(s.endedAt)) t.engineEnd = s.endedAt;
    if (s.error) {
      // the engine failed or lost the attempt without an exit code (launch failed after submit,
      // status lost): the task fails with that reason instead of silently reading as an exit
      if (t.status === 'SUBMITTED' || t.status === 'RUNNING' || t.status === 'READY')
        this.fail(t, t.status === 'SUBMITTED' ? 'launch' : 'lost', s.error);
      this.maybeFinish();
      return;
    }
    if (t.status === 'SUBMITTED' && !this.stopping) this.running(t, handle.attempt, handle, s.startedAt);
    void this.onExit(t, handle.attempt, s.exit ?? { code: null, signal: null });
  }

  private probeCtx(t: TaskRt, p: PlannedProbe): ProbeContext {
    const watched = p.logTask ? this.tasks.get(p.logTask)?.plan.logPath : undefined;
    const transport = t.backend.probeTransport?.();
    return {
      task: t.plan,
      logPath: watched ?? t.plan.logPath,
      startedAt: t.startedAt ?? Date.now(),
      ...(transport ? { transport } : {}),
    };
  }

  private startProbes(t: TaskRt, attempt: number): void {
    startTaskProbes(t, this.o.probes, {
      live: () => t.attempt === attempt && (t.status === 'RUNNING' || t.status === 'READY') && !this.stopping,
      emit: this.o.emit,
      ctx: (p) => this.probeCtx(t, p),
      ready: (probes) => {
        this.setReady(t, probes);
        this.maybeFinish();
      },
      fail: (kind, reason) => this.fail(t, kind, reason),
    });
  }

  private setReady(t: TaskRt, probe: string): void {
    this.setStatus(t, 'READY');
    this.o.emit({ type: 'task_ready', task: t.plan.name, attempt: t.attempt, probe });
    if (t.handle) this.taskReady(t, t.handle);
    this.satisfy(t);
  }

  /**
   * The backend's `taskReady` (resources held until READY go back), with the run's signal and a
   * bound of its own. Dependents do not wait for it; the teardown does (bounded), so nothing is
   * released under a call in flight. A failure or a call past its bound is a warning.
   */
  private taskReady(t: TaskRt, handle: TaskHandle): void {
    const backend = t.backend;
    if (!backend.taskReady) return;
    const ms = this.o.taskReadyTimeoutMs ?? TASK_READY_TIMEOUT_MS;
    const bound = new AbortController();
    const timer = setTimeout(
      () => bound.abort(new Error(`taskReady did not finish within ${ms / 1000} s; given up`)),
      ms,
    );
    const signal = AbortSignal.any([this.scope.signal, bound.signal]);
    const call = (async () => backend.taskReady?.(handle, signal))();
    const p = raceAbort(call, signal)
      .catch((e: unknown) => {
        if (this.scope.signal.aborted) return; // the run is stopping: everything is released anyway
        this.o.emit({
          type: 'log',
          level: 'warning',
          message: `Task '${t.plan.name}': giving back what it held until READY failed: ${errorMessage(e)}`,
        });
      })
      .finally(() => {
        clearTimeout(timer);
        this.readies.delete(p);
      });
    this.readies.add(p);
  }

  /** The task's dependents may no longer wait for it. */
  private satisfy(t: TaskRt): void {
    if (t.satisfied) return;
    t.satisfied = true;
    for (const d of t.dependents) {
      d.unmet--;
      if (d.unmet === 0 && d.attempt === d.attemptBase) this.submit(d);
    }
  }

  private async onExit(t: TaskRt, attempt: number, st: ExitStatus): Promise<void> {
    if (t.attempt !== attempt) return;
    t.exitCode = st.code;
    t.signal = st.signal;
    if (this.stopping || (t.status !== 'RUNNING' && t.status !== 'READY')) return;
    const failed = st.code !== 0;
    const code = st.code ?? (st.signal ? `signal ${st.signal}` : 'unknown');
    if (t.service && t.status === 'RUNNING') {
      const ready = await finalReadinessCheck(t, this.o.probes, (p) => this.probeCtx(t, p));
      if (t.attempt !== attempt || this.stopping || t.status !== 'RUNNING') return;
      stopTaskProbes(t);
      if (ready) this.setReady(t, 'final readiness check');
      else {
        if (failed && canRetry(t.plan.retries, attempt - t.attemptBase)) this.retry(t, attempt, st);
        else this.fail(t, 'not_ready_exit', `service exited before readiness (exit=${code})`);
        this.maybeFinish();
        return;
      }
    }
    stopTaskProbes(t);
    if (!failed) {
      // the teardown of a fail-fast waits until the task is COMPLETED or FAILED
      let release = (): void => undefined;
      const cancel = new AbortController();
      this.finalizations.set(t, { done: new Promise<void>((r) => (release = r)), cancel });
      try {
        const failure = this.o.finalize ? await this.finalize(t, cancel.signal) : undefined;
        if (t.attempt !== attempt || (t.status !== 'RUNNING' && t.status !== 'READY')) return;
        // fail-fast lets a task that already exited 0 finish its finalisation (B2: uploads run
        // before fail-fast can cancel the rest); a signal or the deadline cancelled it meanwhile
        if (this.stopping && this.scope.cause?.kind !== 'end' && this.scope.cause?.kind !== 'fail_fast')
          return;
        if (failure) this.fail(t, failure.kind, failure.reason);
        else this.complete(t);
      } finally {
        this.finalizations.delete(t);
        release();
      }
    } else if (canRetry(t.plan.retries, attempt - t.attemptBase)) this.retry(t, attempt, st);
    else this.fail(t, 'exit', `process exited with error (exit=${code})`);
    this.maybeFinish();
  }

  /** result parsing, assertions and uploads of a task that exited 0 */
  private async finalize(t: TaskRt, cancelled: AbortSignal): Promise<FinalizeFailure | undefined | void> {
    try {
      return await this.o.finalize!(t.plan, cancelled);
    } catch (e) {
      this.o.emit({
        type: 'log',
        level: 'warning',
        message: `Task '${t.plan.name}': finalisation failed: ${errorMessage(e)}`,
      });
      return undefined;
    }
  }

  private complete(t: TaskRt): void {
    this.setStatus(t, 'COMPLETED');
    t.endedAt = Date.now();
    this.o.emit(finishedEvent(t, 'COMPLETED', undefined, true));
    this.satisfy(t);
  }

  /** `reason`: why an attempt that never started is tried again (absent: the attempt exited) */
  private retry(t: TaskRt, attempt: number, st: ExitStatus, reason?: string): void {
    const retries = t.plan.retries!;
    const delayS = retryDelayS(retries, attempt - t.attemptBase);
    this.setStatus(t, 'PENDING');
    t.handle = undefined;
    this.o.emit({
      type: 'task_retry',
      task: t.plan.name,
      attempt,
      exitCode: st.code,
      ...(reason ? { reason } : {}),
      delayS,
      nextAttempt: attempt + 1,
      total: t.attemptBase + totalAttempts(retries),
      ...(t.engineEnd !== undefined ? { at: t.engineEnd } : {}),
    });
    t.retryTimer = setTimeout(() => {
      t.retryTimer = undefined;
      this.submit(t);
    }, delayS * 1000);
  }

  private fail(t: TaskRt, kind: FailKind, reason: string): void {
    if (isDone(t.status)) return;
    stopTaskProbes(t);
    if (t.retryTimer) clearTimeout(t.retryTimer);
    this.setStatus(t, 'FAILED');
    t.failKind = kind;
    t.reason = reason;
    t.endedAt = Date.now();
    const stillRunning = kind === 'failure_probe' || kind === 'readiness_timeout' || kind === 'probe_limit';
    this.o.emit(finishedEvent(t, 'FAILED', reason, !stillRunning));
    this.failFast(t);
  }

  private failFast(trigger: TaskRt): void {
    if (this.stopping) return;
    const failed = this.order
      .filter((t) => t.status === 'FAILED')
      .map((t) => ({ name: t.plan.name, kind: t.failKind! }));
    this.o.emit({ type: 'fail_fast', message: failFastMessage(failed) });
    this.scope.cancel({ kind: 'fail_fast', reason: `cancelled by fail-fast (${trigger.plan.name} failed)` });
  }

  /** `keepFinalizing`: a task that exited 0 and is finalising is let finish (fail-fast) */
  private cancelAll(reason: string, keepFinalizing = false): void {
    for (const t of this.order) {
      if (isDone(t.status) || (keepFinalizing && this.finalizations.has(t))) continue;
      // a task cancelled in its finalisation: its uploads stop (a CANCELLED task uploads nothing)
      this.finalizations.get(t)?.cancel.abort(new Error(`${t.plan.name} was cancelled (${reason})`));
      stopTaskProbes(t);
      if (t.retryTimer) clearTimeout(t.retryTimer);
      t.retryTimer = undefined;
      this.setStatus(t, 'CANCELLED');
      t.endedAt = Date.now();
      this.o.emit(finishedEvent(t, 'CANCELLED', reason, false));
    }
  }

  private maybeFinish(): void {
    if (this.stopping || this.unsettled > 0) return;
    this.scope.end();
    void this.teardown('teardown');
  }

  // ---------------------------------------------------------------- teardown

  private teardown(why: 'teardown' | 'fail_fast' | 'signal' | 'cancel'): Promise<void> {
    this.teardownP ??= (async () => {
      for (const t of this.order) {
        stopTaskProbes(t);
        if (t.retryTimer) clearTimeout(t.retryTimer);
      }
      while (this.launches.size > 0) await Promise.all([...this.launches]);
      await Promise.all([...this.readies]);
      // tasks fail-fast let finish their finalisation end COMPLETED (or FAILED) before the run does
      if (why === 'fail_fast') await Promise.all([...this.finalizations.values()].map((f) => f.done));
      const targets = stopTargets(this.order);
      await stopAndReport(
        targets,
        this.graceMs,
        this.o.emit,
        () => (this.scope.forced.aborted ? 'forced' : why),
        this.scope.forced,
      );
      for (const x of targets) this.watch.remove(x.backend, x.handle);
      this.resolveDone();
    })();
    return this.teardownP;
  }
}
