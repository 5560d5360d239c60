/** The orchestrator's options and result (orchestrator.ts). */
import type { Backend, TaskHandle } from '../backends/backend.js';
import type { Plan, PlannedTask } from '../plan/types.js';
import type { RunEventInput, TaskStatus } from '../events/events.js';
import type { ProbeDriver } from '../probes/probe-driver.js';
import type { FinalizeFailure } from './task-state.js';

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
   * (kind and reason) makes the task FAILED instead
   */
  finalize?: (task: PlannedTask) => Promise<FinalizeFailure | undefined | void>;
  /** TERM → KILL grace per process group (default 5 s) */
  graceMs?: number;
  /** append a handle change to the run's handle ledger (launched / updated / ended) */
  ledger?: (op: 'launched' | 'updated' | 'ended', handle: TaskHandle) => void;
  /** bound of one batched status call and how many unanswered calls make a handle lost */
  pollTimeoutMs?: number;
  lostAfter?: number;
}

export interface OrchestratorOutcome {
  statuses: Array<[string, TaskStatus]>;
  /** the signal that cancelled the run, if any */
  signal?: string;
}
