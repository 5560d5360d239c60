/** The orchestrator's options and result (orchestrator.ts). */
import type { Backend, TaskHandle } from '../backends/backend.js';
import type { Plan, PlannedTask } from '../plan/types.js';
import type { RunEventInput, TaskStatus } from '../events/events.js';
import type { ProbeDriver } from '../probes/probe-driver.js';
import type { FinalizeFailure } from './task-state.js';
import type { Scope } from './scope.js';

export interface OrchestratorOptions {
  plan: Plan;
  /** backend instance per planned backend name */
  backends: Map<string, Backend>;
  probes: ProbeDriver;
  emit: (e: RunEventInput) => void;
  /** task working directory (where sflow was started) */
  cwd: string;
  /** inherited environment (default: process.env) */
  baseEnv?: NodeJS.ProcessEnv;
  /**
   * after exit 0, before COMPLETED: result parsing, assertions, uploads; a returned failure
   * (kind and reason) makes the task FAILED instead; `cancelled` fires when the task is
   * cancelled meanwhile (a signal, the workflow deadline): its uploads stop
   */
  finalize?: (task: PlannedTask, cancelled: AbortSignal) => Promise<FinalizeFailure | undefined | void>;
  /** TERM → KILL grace per process group (default 5 s) */
  graceMs?: number;
  /**
   * makes the task's folder and empty log (runtime.md 8.3: before the task starts); throws a worded
   * error, which fails the launch. Called again for tasks already made: it must be cheap then.
   */
  taskFolder?: (task: string) => void;
  /** append a handle change to the run's handle ledger (launched / updated / ended) */
  ledger?: (op: 'launched' | 'updated' | 'ended', handle: TaskHandle) => void;
  /** bound of one batched status call and how many unanswered calls make a handle lost */
  pollTimeoutMs?: number;
  lostAfter?: number;
  /** bound of one backend `taskReady` call (default 30 s): past it the call is given up, with a warning */
  taskReadyTimeoutMs?: number;
  /** a resumed run: tasks taken over as they ended earlier, and attempts made earlier */
  resume?: ResumeTasks;
  /**
   * the scope the run goes on under (the session's run scope): cancelling it stops the run (a
   * signal, the deadline), a second signal forces; the orchestrator cancels it on fail-fast and
   * ends it when every task is settled. Default: a scope of its own.
   */
  scope?: Scope;
}

/** What a resumed session starts from (see runtime/resume.ts, which computes it from the ledger). */
export interface ResumeTasks {
  /** pre-settled tasks: never launched, announced as `task_reused`, their dependents may start */
  reused: Map<string, { attempt: number; status: 'COMPLETED' | 'READY' }>;
  /** attempts every task made in earlier sessions: attempt numbers continue after them */
  attempts: Map<string, number>;
}

export interface OrchestratorOutcome {
  statuses: Array<[string, TaskStatus]>;
  /** the signal that cancelled the run, if any */
  signal?: string;
}
