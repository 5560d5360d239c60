/**
 * Batched stop of Slurm attempts: ONE `scancel --signal=TERM <step…>` for every step that has an
 * id (the srun clients still waiting to create a step get SIGTERM directly), the grace, then ONE
 * `scancel --signal=KILL <step…>` for what is left and SIGKILL to its srun clients. An attempt is
 * gone when its srun client has exited (this driver's) or, for a handle read from a dead driver's
 * ledger, when Slurm no longer lists its step and its client process is gone.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { processStartTime } from '../../util/process-liveness.js';
import { handleKey, type StopOptions, type StopOutcome, type TaskHandle } from '../backend.js';
import type { LiveAttempt } from './live-steps.js';
import { stepsOf } from './live-steps.js';
import type { SlurmExec } from './slurm-exec.js';
import { engineStateOf } from '../handle-state.js';
import { slurmHandleState, slurmStepIds, type SlurmHandleState } from './handle-state.js';

const AFTER_KILL_MS = 10_000;

interface Entry {
  h: TaskHandle;
  a?: LiveAttempt;
  /** another driver's attempt: its engine state, as the kind parsed it */
  st?: SlurmHandleState;
  signals: string[];
  alreadyGone: boolean;
  error?: string;
}

const short = (h: string) => h.split('.')[0];

/** the srun client of a ledger handle, when it runs on this machine (same pid and start time) */
function clientPgid(h: TaskHandle): number | undefined {
  const p = h.process;
  if (!p || short(p.host) !== short(hostname()) || p.pgid <= 1) return undefined;
  const now = processStartTime(p.pid);
  if (now === null || (p.startTime !== undefined && now !== p.startTime)) return undefined;
  return p.pgid;
}

function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* already gone */
  }
}

export async function stopAttempts(
  exec: SlurmExec,
  handles: TaskHandle[],
  liveOf: (h: TaskHandle) => LiveAttempt | undefined,
  opts: StopOptions,
  signal: AbortSignal,
): Promise<Map<string, StopOutcome>> {
  const t0 = Date.now();
  const entries: Entry[] = handles.map((h) => {
    const a = liveOf(h);
    // another driver's handle: its steps through the kind's parse (a state it cannot read throws)
    return {
      h,
      a,
      ...(a ? {} : { st: engineStateOf(slurmHandleState, h) }),
      signals: [],
      alreadyGone: false,
    };
  });
  const foreign = entries.filter((e) => !e.a);
  const foreignIds = (e: Entry): string[] => (e.st ? slurmStepIds(e.st) : []);
  const liveForeignSteps = async (): Promise<Set<string>> => {
    const jobs = new Set(
      foreign.flatMap((e) => (e.st?.job !== undefined && e.st.steps.length ? [e.st.job] : [])),
    );
    const seen = new Set<string>();
    for (const job of jobs) {
      const r = await stepsOf(exec, job, AbortSignal.timeout(15_000));
      if ('steps' in r) r.steps.forEach((s) => seen.add(s.id));
      else foreign.forEach((e) => (e.error = r.error));
    }
    return seen;
  };
  let foreignSteps = await liveForeignSteps();
  const gone = (e: Entry): boolean =>
    e.a
      ? Boolean(e.a.exit)
      : !foreignIds(e).some((id) => foreignSteps.has(id)) && clientPgid(e.h) === undefined;
  for (const e of entries) e.alreadyGone = gone(e);
  const active = entries.filter((e) => !e.alreadyGone);
  for (const e of active) if (e.a) e.a.stopped = true;
  const stepIds = (es: Entry[]) =>
    es.flatMap((e) => (e.a ? (e.a.stepId ? [e.a.stepId] : []) : foreignIds(e)));
  const pgidOf = (e: Entry) => (e.a ? (e.a.exit ? undefined : e.a.group.pgid) : clientPgid(e.h));

  const send = async (sig: 'TERM' | 'KILL', es: Entry[]) => {
    const ids = stepIds(es);
    if (ids.length) {
      const r = await exec('scancel', [`--signal=${sig}`, ...ids], { timeoutMs: 15_000, retries: 1 });
      // "Invalid job id" / "already completing" for a step that just ended is not a failure
      const fine = r.ok || /Invalid job|already completing|not found/i.test(r.stderr);
      for (const e of es) {
        if (stepIds([e]).length) e.signals.push(`scancel --signal=${sig}`);
        if (!fine)
          e.error = `scancel --signal=${sig}: ${(r.stderr || r.stdout).trim() || `exit ${r.exitCode}`}`;
      }
    }
    for (const e of es) {
      // a client still waiting to create its step, or one whose step is gone: signal it directly
      if (stepIds([e]).length && sig === 'TERM') continue;
      const pgid = pgidOf(e);
      if (pgid === undefined) continue;
      killGroup(pgid, `SIG${sig}`);
      e.signals.push(`SIG${sig}`);
    }
  };
  const waitGone = async (es: Entry[], ms: number, hurry?: AbortSignal) => {
    const end = Date.now() + ms;
    while (es.some((e) => !gone(e)) && Date.now() < end && !hurry?.aborted) {
      await sleep(100);
      if (foreign.length) foreignSteps = await liveForeignSteps();
    }
  };

  if (!opts.force && active.length) {
    await send('TERM', active);
    await waitGone(active, opts.graceMs, signal);
  }
  const left = active.filter((e) => !gone(e));
  if (left.length) {
    await send('KILL', left);
    await waitGone(left, AFTER_KILL_MS);
  }
  const out = new Map<string, StopOutcome>();
  for (const e of entries) {
    const done = gone(e);
    out.set(handleKey(e.h), {
      signals: e.signals,
      gone: done,
      alreadyGone: e.alreadyGone,
      elapsedMs: Date.now() - t0,
      ...(e.error && !done ? { error: e.error } : {}),
    });
  }
  return out;
}
