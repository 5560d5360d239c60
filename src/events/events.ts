/**
 * Everything observable about a run is one of these events, on one stream. The console printer,
 * summary log, events.jsonl, monitor markers and reports are consumers; none of them is fed
 * any other way. Events are plain JSON.
 */

import type { TaskHandle } from './handle.js';

export type { TaskHandle };

/**
 * PENDING (waiting for dependencies or a retry delay) → SUBMITTED (handed to the backend; queued
 * on a remote engine) → RUNNING → READY (readiness passed) → COMPLETED | FAILED | CANCELLED.
 */
export type TaskStatus = 'PENDING' | 'SUBMITTED' | 'RUNNING' | 'READY' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

interface Base {
  /** ms since epoch: when the driver saw it happen (the bus stamps it) */
  t: number;
}

/**
 * When the engine says an attempt really started / ended (ms since epoch), on the events of an
 * attempt's lifecycle; absent when the engine gave no time. `t` stays the moment the driver saw
 * the change (a poll may see a start late, a finish waits for result parsing). Read both
 * through `eventTime`.
 */
interface EngineTime {
  at?: number;
}

export type RunEvent = Base &
  (
    | {
        type: 'run_started';
        workflow: string;
        runId: string;
        runDir: string;
        tasks: string[];
        /** which session of the run this is: 1, or 2… for `sflow run --resume` (absent: 1) */
        session?: number;
        /** the driver process of this session (a later `--resume` checks it is gone) */
        driver?: DriverInfo;
        /** a resumed session: what it takes over from the earlier ones and what it runs again */
        resume?: { reused: number; rerun: string[]; forced: boolean };
      }
    /**
     * A resumed session takes the task over as it ended in an earlier session (COMPLETED, or
     * READY for a service none of whose dependents runs again): not run again, its outputs and
     * results stand. `attempt` is that earlier attempt's number.
     */
    | { type: 'task_reused'; task: string; attempt: number; status: 'COMPLETED' | 'READY' }
    /** handed to the backend (the attempt may wait in the engine's queue) */
    /** `gatedOn`: a merged-pod member that waits in its pod for these members (Kubernetes) */
    | { type: 'task_submitted'; task: string; attempt: number; gatedOn?: string[] }
    /** the backend reports the attempt running (`at`: when the engine says it started) */
    | ({
        type: 'task_started';
        task: string;
        attempt: number;
        pid?: number;
        handle?: TaskHandle;
      } & EngineTime)
    /** the backend learned more about a running attempt (remote ids arrived); the ledger has it too */
    | { type: 'task_handle'; task: string; attempt: number; handle: TaskHandle }
    | { type: 'task_ready'; task: string; attempt: number; probe: string }
    /** `at`: when the engine says the attempt's process ended (absent: it did not end, or no time) */
    | ({
        type: 'task_finished';
        task: string;
        attempt: number;
        status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
        exitCode: number | null;
        signal?: string | null;
        reason?: string;
      } & EngineTime)
    /** the attempt failed and another follows (`at`: when the engine says the failed one ended) */
    | ({
        type: 'task_retry';
        task: string;
        attempt: number;
        exitCode: number | null;
        /** set when the attempt could not start (a transient launch failure): why */
        reason?: string;
        delayS: number;
        nextAttempt: number;
        total: number;
      } & EngineTime)
    | {
        type: 'probe_result';
        task: string;
        role: 'readiness' | 'failure';
        kind: string;
        /** healthy: a met readiness check, or a failure check that found nothing */
        ok: boolean;
        detail: string;
        /** which probe (`tcp_port 127.0.0.1:8000`), to tell several probes of one kind apart */
        target?: string;
        /** the probe stopped for good: its pattern hit the regex time limit (this says why) */
        limit?: string;
      }
    | {
        type: 'result_parsed';
        task: string;
        ok: boolean;
        values: Record<string, unknown>;
        errors: string[];
        /** where result.json was written */
        resultPath?: string;
        /** outcome of each `assert:` expression, in recipe order */
        assertions?: AssertionOutcome[];
      }
    | {
        type: 'external_call';
        tool: string;
        args: string[];
        exitCode: number | null;
        durationMs: number;
        timedOut: boolean;
        /** it answered as the caller needed (an expected answer such as a 404 after removal counts) */
        ok: boolean;
        /** it failed with an answer the caller expected: not a failure of the tool */
        expected?: true;
        /** a failed call: the end of what it said */
        error?: string;
      }
    | { type: 'log'; level: 'debug' | 'info' | 'warning' | 'error'; message: string }
    | { type: 'fail_fast'; message: string }
    | { type: 'signal'; signal: string; count: number }
    | {
        type: 'run_finished';
        status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
        exitCode: number;
        message: string;
      }
    /** the static shape of the run (emitted right after run_started), so sinks need nothing but events */
    | {
        type: 'run_plan';
        tasks: PlanTaskInfo[];
        backends: PlanBackendInfo[];
        commandLogs?: Array<{ family: string; path: string }>;
      }
    /** a task's process group was stopped (cancel, teardown of a service, failure probe) */
    | {
        type: 'task_stopped';
        task: string;
        attempt: number;
        why: 'teardown' | 'cancel' | 'fail_fast' | 'signal' | 'forced';
        signals: string[];
        elapsedMs: number;
      }
    /** a backend's allocation: waiting in a queue (repeated as progress), granted, failed, released */
    | {
        type: 'backend_allocation';
        backend: string;
        phase: 'waiting' | 'allocated' | 'failed' | 'released';
        message: string;
        nodes?: string[];
        waitedMs?: number;
      }
    /** an event sink failed (reported once per sink; the run goes on without it) */
    | { type: 'sink_failed'; sink: string; message: string; path?: string }
    /**
     * one file of a task's `uploads:`, or the run archive of `workflow.upload_all` (no `task`):
     * start → (progress | retry)* → done | failed. Nothing secret is ever in these fields.
     */
    | {
        type: 'upload';
        phase: 'start' | 'progress' | 'retry' | 'done' | 'failed';
        task?: string;
        target: string;
        /** local file (or the run directory for upload_all, or the `from` that matched nothing) */
        from: string;
        /** s3://bucket/key; '' when the target could not be used */
        dest: string;
        /** size in bytes (start, progress, done) */
        bytes?: number;
        /** bytes acknowledged (progress) */
        sent?: number;
        /** done: 1 for a single PutObject, else the multipart part count */
        parts?: number;
        /** the attempt about to be made (retry) / the most any request needed (done, failed) */
        attempt?: number;
        delayS?: number;
        durationMs?: number;
        error?: string;
        /** failed: the task was cancelled while it uploaded (the file was not uploaded because of that) */
        cancelled?: boolean;
        onError: 'warn' | 'fail';
      }
    /** teardown of every live process group: start and end */
    | { type: 'teardown'; phase: 'start' | 'end'; groups: number; elapsedMs?: number }
  );

/** The process that drives a session (its pid's start time guards against pid reuse). */
export interface DriverInfo {
  pid: number;
  host: string;
  /** clock ticks since boot (Linux /proc), when known */
  startTime?: number;
}

/** One task as the plan describes it (for summaries and reports). */
export interface PlanTaskInfo {
  name: string;
  base: string;
  backend: string;
  dependsOn: string[];
  /** has a readiness probe */
  service: boolean;
  probes: Array<{ role: 'readiness' | 'failure'; kind: string; target: string }>;
  retries: { count: number; intervalS: number; backoff: number } | null;
  nodes: string[];
  gpus: number[] | null;
  /** GPUs each of its nodes (pods) gets where the engine picks the devices (Kubernetes) */
  enginePicksGpus?: number;
  logPath: string;
  outputDir: string;
  /** replica position and sweep values (Python str) of a replicated task */
  replica?: { index: number; count: number; sequential: boolean; sweep: Record<string, string> };
}

/** One `assert:` expression after result parsing. */
export interface AssertionOutcome {
  /** as written, `${{ … }}` included */
  expr: string;
  ok: boolean;
  /** each name the expression read, rendered (`result.tput` → `0.0`); `<missing>` when absent */
  seen: Record<string, string>;
  /** why it could not be evaluated (a missing value, a type error) */
  error?: string;
}

export interface PlanBackendInfo {
  name: string;
  type: string;
  /** nodes are synthetic stand-ins for this machine (no topology to report) */
  synthetic?: boolean;
  /** `gpuUuids`: GPU UUIDs by index, from the backend's topology probe (Slurm) */
  nodes: Array<{ name: string; ip: string; numGpus: number | null; gpuUuids?: string[] }>;
}

export type RunEventType = RunEvent['type'];

/**
 * When an event happened as far as the run's records go: the engine's time of an attempt's start
 * or end when it gave one (`at`), else the moment the driver saw it (`t`). Every consumer that
 * measures durations or places events on a time axis reads this.
 */
export function eventTime(e: RunEvent): number {
  return 'at' in e && typeof e.at === 'number' && Number.isFinite(e.at) ? e.at : e.t;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as emitted: the bus stamps the time. */
export type RunEventInput = DistributiveOmit<RunEvent, 't'>;

/** What the summary's Runtime section shows about the sflow that ran. */
export interface RuntimeInfo {
  version: string;
  node: string;
  bin: string;
  packageDir: string;
}

export interface RunEventSink {
  /** how failures of this sink are named (`events.jsonl`, `console`); default: its class name */
  readonly name?: string;
  /** the file it writes, named when a write fails */
  readonly path?: string;
  emit(event: RunEvent): void;
  /** write what it holds to its file now (before `workflow.upload_all` archives the run folder) */
  checkpoint?(): void;
  /** flush and close (files); awaited at the very end of a run */
  close?(): Promise<void>;
}
