/**
 * The Backend adapter interface (local, docker, slurm, kubernetes). A flat list of verbs in the
 * spirit of Nomad's task drivers: allocate a topology, launch one attempt of a planned task,
 * wait for it, stop it, release everything. A TaskHandle is plain data so it can be written to
 * the run directory and used by a later process to find or reap what a dead driver left behind.
 */
import type { BackendType, PlannedBackend, PlannedNode, PlannedTask } from '../plan/types.js';

export interface BackendCapabilities {
  defaultOperator: string | null;
  gpuIndices: boolean;
  gpuReservationRegistry: boolean;
  monitor: boolean;
  batch: boolean;
  failFastDefault: boolean;
}

/** Serializable description of one launched attempt. */
export interface TaskHandle {
  backend: string;
  task: string;
  attempt: number;
  /** local: process group id; docker: container ids; slurm: job/step ids; k8s: pod names */
  ids: Record<string, string | number | string[]>;
  startedAt: string;
  logPath: string;
}

export interface ExitStatus {
  /** process exit code; null when killed by a signal */
  code: number | null;
  signal: string | null;
}

export interface StopOutcome {
  signals: string[];
  gone: boolean;
  alreadyGone: boolean;
}

export interface LaunchContext {
  runDir: string;
  attempt: number;
  /** full environment for the task process (inherited + sflow entries) */
  env: Record<string, string>;
  cwd: string;
}

export interface Backend {
  readonly name: string;
  readonly type: BackendType;
  capabilities(): BackendCapabilities;
  /** check tools/hosts before anything is allocated; throws SflowError(phase 'preflight') */
  preflight(): Promise<void>;
  /** real nodes of this backend (local: synthetic) */
  allocate(): Promise<PlannedNode[]>;
  launch(task: PlannedTask, ctx: LaunchContext): Promise<TaskHandle>;
  wait(handle: TaskHandle): Promise<ExitStatus>;
  /** SIGTERM (or equivalent), `graceMs`, then force; resolves when everything of the attempt is gone */
  stop(handle: TaskHandle, graceMs: number): Promise<void>;
  /** force-kill immediately (second Ctrl-C) */
  kill(handle: TaskHandle): Promise<void>;
  /** stop() that also reports which signals were needed (for the summary and events) */
  stopWithOutcome?(handle: TaskHandle, graceMs: number): Promise<StopOutcome>;
  /** false once nothing of the attempt runs any more (leader and stray children); unknown → omit */
  isAlive?(handle: TaskHandle): boolean;
  release(): Promise<void>;
}

export type BackendFactory = (planned: PlannedBackend) => Backend;
