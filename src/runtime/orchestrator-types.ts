/** The orchestrator's options and result (orchestrator.ts). */
import type { Backend } from '../backends/backend.js';
import type { Plan, PlannedTask } from '../plan/types.js';
import type { RunEvent, TaskStatus } from './events.js';
import type { ProbeDriver } from './probe-driver.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type RunEventInput = DistributiveOmit<RunEvent, 't'>;

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
  /** result parsing, uploads … after exit 0, before COMPLETED; `{fail}` makes the task FAILED */
  finalize?: (task: PlannedTask) => Promise<void | { fail: string }>;
  /** TERM → KILL grace per process group (default 5 s) */
  graceMs?: number;
}

export interface OrchestratorOutcome {
  statuses: Array<[string, TaskStatus]>;
  /** the signal that cancelled the run, if any */
  signal?: string;
}
