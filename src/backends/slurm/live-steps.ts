/**
 * The attempts one Slurm backend instance launched: each is a process group on the driver (the
 * `srun` client of a job step, or a plain command for a non-srun operator) writing straight into
 * the task log. Which step an srun client created is learned from ONE `scontrol -o show step
 * <job>` per tick for the whole allocation, matched by the client's host and pid (`SrunHost:Pid`);
 * until then the attempt is SUBMITTED (srun is still waiting to create its step).
 */
import { hostname } from 'node:os';
import type { PlannedTask } from '../../plan/types.js';
import type { GroupHandle } from '../../util/process-group.js';
import type { ExitStatus, HandleStatus, TaskHandle } from '../backend.js';
import { sleep } from '../../util/sleep.js';
import { callFailure, type SlurmExec } from './slurm-exec.js';
import { noSteps, parseSteps, type StepInfo } from './steps.js';
import { readStepTimes, type StepStamp } from './step-stamp.js';
import { engineFields } from '../handle-state.js';
import { slurmHandleState } from './handle-state.js';

export interface LiveAttempt {
  handle: TaskHandle;
  task: PlannedTask;
  group: GroupHandle;
  /** an `srun` client (a Slurm job step) rather than a command on the driver */
  step: boolean;
  /** `<job>.<step>` once scontrol named it (as scancel takes it) */
  stepId?: string;
  /** its job and step, for the handle's engine state */
  named?: { job: string; step: string };
  /** the step was seen running (or the command is a local one) */
  running: boolean;
  /** sflow asked it to stop (an srun exit of 128+n is then read as that signal) */
  stopped: boolean;
  exit?: ExitStatus;
  /** driver clock at launch (the step start bound counts from it) */
  launchedAt?: number;
  /** why the step never started, once known (the attempt then fails with it) */
  startError?: string;
  /** the client was stopped for waiting past this bound (ms) for its step */
  startTimedOutMs?: number;
  /** where the step writes its start time (srun steps) */
  stamp?: StepStamp;
  /** when the step (or command) started and ended, as far as the engine and srun tell (ms) */
  startedAt?: number;
  endedAt?: number;
}

export const shortHost = (h: string = hostname()): string => h.split('.')[0];

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

/** srun's exit status as the attempt's: 128+n after sflow stopped it means "killed by signal n". */
export function stepExit(code: number | null, signal: string | null, stopped: boolean): ExitStatus {
  if (stopped && code !== null && code > 128 && SIGNALS[code - 128])
    return { code: null, signal: SIGNALS[code - 128] };
  return { code, signal };
}

/** Steps of a job, or null when the call failed (the caller retries next tick). */
export async function stepsOf(
  exec: SlurmExec,
  jobId: string,
  signal: AbortSignal,
): Promise<{ steps: StepInfo[] } | { error: string }> {
  const args = ['-o', 'show', 'step', jobId];
  const r = await exec('scontrol', args, { signal, timeoutMs: 20_000 });
  if (r.ok) return { steps: parseSteps(r.stdout) };
  if (noSteps(r.stdout + r.stderr)) return { steps: [] };
  return { error: callFailure('scontrol', args, r) };
}

/** Matches steps to srun clients of this driver: by host and pid. Returns the attempts newly named. */
export function matchSteps(
  live: Iterable<LiveAttempt>,
  steps: StepInfo[],
  host = shortHost(),
): LiveAttempt[] {
  // a step still waiting for resources is listed as `<job>.TDB`, State=PENDING: not started yet
  const started = steps.filter((s) => s.state !== 'PENDING' && !s.id.endsWith('.TDB'));
  const byPid = new Map(started.filter((s) => shortHost(s.srunHost) === host).map((s) => [s.srunPid, s]));
  const named: LiveAttempt[] = [];
  for (const a of live) {
    if (!a.step || a.stepId || a.exit) continue;
    const s = byPid.get(a.group.pid);
    if (!s) continue;
    a.stepId = s.id;
    if (s.step) a.named = { job: s.job, step: s.step };
    a.running = true;
    named.push(a);
  }
  return named;
}

/** An attempt's status as the backend reports it: state, step id, and its times when known. */
export function attemptStatus(a: LiveAttempt): HandleStatus {
  const ids = a.named
    ? { named: engineFields(slurmHandleState, { kind: 'slurm', job: a.named.job, steps: [a.named.step] }) }
    : {};
  const times = {
    ...(a.startedAt !== undefined ? { startedAt: a.startedAt } : {}),
    ...(a.endedAt !== undefined ? { endedAt: a.endedAt } : {}),
  };
  if (a.exit)
    return {
      state: 'EXITED',
      exit: a.exit,
      ...ids,
      ...times,
      ...(a.startError ? { error: a.startError } : {}),
    };
  return { state: a.running ? 'RUNNING' : 'SUBMITTED', ...ids, ...times };
}

/** how long a listed step may take to write its start stamp before it is reported RUNNING without */
const STAMP_WAIT_MS = 2_000;

/**
 * A step Slurm lists: RUNNING once its start stamp is readable (the step writes it a moment after
 * Slurm lists it), or without a start time when none came within STAMP_WAIT_MS (a task folder
 * the node does not see). An attempt that ended meanwhile is reported by its exit instead.
 */
export async function announceRunning(
  a: LiveAttempt,
  push: (a: LiveAttempt, s: HandleStatus) => void,
): Promise<void> {
  const until = Date.now() + STAMP_WAIT_MS;
  while (a.stamp && a.startedAt === undefined && !a.exit) {
    a.startedAt = readStepTimes(a.stamp).start;
    if (a.startedAt !== undefined || Date.now() >= until) break;
    await sleep(100);
  }
  if (!a.exit) push(a, attemptStatus(a));
}
