/**
 * One task attempt on Kubernetes: its pods (one per node, the leader first), their log streams
 * and its status, all read from the run's pod watch — no request per pod per tick. States:
 * SUBMITTED until the leader's container runs, RUNNING, then EXITED once the leader ended (its
 * exit code is the task's), a worker failed, a pod cannot start (image pull, config: `error`), or
 * the attempt was stopped (code null). EXITED is reported after every log stream has drained, so
 * the task log is complete when the runtime reads it; the attempt's other pods and its env Secret
 * are deleted then.
 */
import { setMaxListeners } from 'node:events';
import type { ExitStatus, HandleStatus, TaskHandle } from '../backend.js';
import { apiMessage } from './client.js';
import { TaskLogSink } from './log-sink.js';
import { podState, refineTime } from './pod-status.js';
import type { K8sRun } from './run-context.js';

const DRAIN_MS = 15_000;

export interface AttemptHooks {
  push(handle: TaskHandle, status: HandleStatus): void;
  /** a pod of the attempt ended or went away (its GPUs no longer count on its node) */
  podEnded(pod: string): void;
  /** deletes what is left of the attempt (pods, Secret) once it ended */
  cleanup(a: PodAttempt): Promise<void>;
}

export class PodAttempt {
  state: HandleStatus['state'] = 'SUBMITTED';
  exit: ExitStatus | undefined;
  error: string | undefined;
  stopping: { signal: string; at: number; graceMs: number } | undefined;
  readonly sink: TaskLogSink;
  private readonly streams = new Map<string, Promise<void>>();
  private readonly streamAbort = new AbortController();
  private readonly seen = new Set<string>();
  private final = false;
  private readonly submittedAt = Date.now();
  private resolveDone!: () => void;
  /** resolves once EXITED was reported */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));
  /** k8s_mpi MPIJob route: the attempt's MPIJob (deleted with the attempt's other objects) */
  mpiJob: string | undefined;
  /** extra work before EXITED (the output copy) */
  pendingWork: Promise<void> | undefined;
  /** the leader's container times (whole seconds) and when the driver saw it start / end */
  private leader: {
    startedAt?: number;
    finishedAt?: number;
    seenStart?: number;
    seenEnd?: number;
    /** the script's end, announced on the log before the output copy (the container lives on) */
    scriptEnd?: number;
  } = {};

  constructor(
    readonly r: K8sRun,
    readonly handle: TaskHandle,
    /** pod names, leader first */
    readonly pods: string[],
    private readonly hooks: AttemptHooks,
    tap?: (pod: string, line: string) => void,
    private readonly unschedulableMs = 600_000,
    /**
     * k8s_mpi MPIJob route: only the leader (the launcher) is followed and decides the task; the
     * others (the operator's workers) only count for a stop, which waits until they are gone too
     */
    private readonly leaderOnly = false,
  ) {
    this.sink = new TaskLogSink(handle.logPath, pods.length > 1, tap);
    setMaxListeners(0, this.streamAbort.signal);
    // a pod the scheduler cannot place sees no event for as long as it waits: its bound is
    // checked on a clock of its own, not only when the watch brings news
    this.boundTimer = setInterval(
      () => {
        if (this.final || this.state !== 'SUBMITTED') clearInterval(this.boundTimer);
        else this.update();
      },
      Math.min(Math.max(unschedulableMs / 4, 250), 5_000),
    );
    this.boundTimer.unref();
  }

  private readonly boundTimer: NodeJS.Timeout;

  status(): HandleStatus {
    const startedAt = refineTime(this.leader.startedAt, this.leader.seenStart);
    const started = startedAt !== undefined ? { startedAt } : {};
    if (this.state !== 'EXITED') return { state: this.state, ...started };
    const container = refineTime(this.leader.finishedAt, this.leader.seenEnd);
    const script = this.leader.scriptEnd;
    const endedAt =
      script !== undefined && (container === undefined || script < container) ? script : container;
    return {
      state: 'EXITED',
      ...(this.error ? { error: this.error } : { exit: this.exit ?? { code: null, signal: null } }),
      ...started,
      ...(endedAt !== undefined ? { endedAt } : {}),
    };
  }

  /**
   * The leader's script ended (its output-collect trap announced the staged files): the task's end,
   * seen on the log as it happened; the container lives on until the driver copied the files.
   */
  scriptEnded(at = Date.now()): void {
    this.leader.scriptEnd ??= at;
  }

  /** the leader's container times and the first moments the driver saw it running / ended */
  private noteLeader(st: ReturnType<typeof podState>): void {
    const now = Date.now();
    const l = this.leader;
    if (st.startedAt !== undefined) l.startedAt = st.startedAt;
    if (st.started || st.terminated) l.seenStart ??= now;
    if (st.terminated) {
      if (st.finishedAt !== undefined) l.finishedAt = st.finishedAt;
      l.seenEnd ??= now;
    }
  }

  /** Looks at the attempt's pods in the watch cache; called on every change of one of them. */
  update(): void {
    if (this.final) return;
    const w = this.r.watch;
    let leaderStarted = false;
    for (const [i, name] of this.pods.entries()) {
      const pod = w.get(name);
      if (pod) this.seen.add(name);
      const st = podState(pod);
      if ((st.started || st.terminated) && !this.streams.has(name) && pod && (i === 0 || !this.leaderOnly))
        this.follow(name);
      if (i === 0) {
        leaderStarted = st.started || st.terminated;
        this.noteLeader(st);
      }
      if (st.terminated || (!pod && this.seen.has(name))) this.hooks.podEnded(name);
    }
    if (this.stopping) {
      const gone = this.pods.every((p) => !w.get(p) || podState(w.get(p)).terminated);
      if (gone) {
        const killed = Date.now() - this.stopping.at >= this.stopping.graceMs && this.stopping.graceMs > 0;
        this.finish({ code: null, signal: killed ? 'SIGKILL' : this.stopping.signal });
      }
      return;
    }
    for (const [i, name] of this.pods.entries()) {
      if (i > 0 && this.leaderOnly) break;
      const pod = w.get(name);
      const st = podState(pod);
      if (st.problem) return this.fail(`pod ${name}: ${st.problem}`);
      if (!pod && this.seen.has(name) && !st.terminated)
        return this.fail(`pod ${name} was deleted outside sflow`);
      if (st.unschedulable && Date.now() - this.submittedAt > this.unschedulableMs)
        return this.fail(
          `pod ${name} could not be scheduled within ${Math.round(this.unschedulableMs / 1000)} s (raise the backend's reservation.timeout to wait longer): ${st.unschedulable}`,
        );
      if (i === 0 && st.terminated) return this.finish({ code: st.exitCode, signal: st.signal });
      if (i > 0 && st.terminated && st.exitCode !== 0) {
        this.r.log(
          `Task '${this.handle.task}': pod ${name} (node ${i}) exited with ${st.exitCode}; stopping the task`,
        );
        return this.finish({ code: st.exitCode, signal: st.signal });
      }
    }
    if (leaderStarted && this.state === 'SUBMITTED') {
      this.state = 'RUNNING';
      this.hooks.push(this.handle, this.status());
    }
  }

  /** The attempt is being stopped (its pods were deleted with `graceMs`). */
  markStopping(signal: string, graceMs: number): void {
    if (this.final) return;
    this.stopping ??= { signal, at: Date.now(), graceMs };
  }

  fail(reason: string): void {
    if (this.final) return;
    this.error = reason;
    this.end();
  }

  private finish(exit: ExitStatus): void {
    if (this.final) return;
    this.exit = exit;
    this.end();
  }

  private end(): void {
    this.final = true;
    clearInterval(this.boundTimer);
    // the leader's end can reach the watch before another pod's start does (a short pod may even
    // have ended already): follow every pod not followed yet, or its log would be lost
    if (!this.error && !this.stopping && !this.leaderOnly)
      for (const name of this.pods) if (!this.streams.has(name)) this.follow(name);
    void (async () => {
      // every stream drains (bounded): the log is complete before EXITED is reported
      const drained = Promise.allSettled([...this.streams.values()]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
      clearTimeout(timer);
      this.streamAbort.abort();
      await this.pendingWork?.catch(() => undefined);
      this.sink.close();
      this.state = 'EXITED';
      await this.hooks
        .cleanup(this)
        .catch((e: unknown) => this.r.log(`Task '${this.handle.task}': cleanup: ${apiMessage(e)}`));
      this.hooks.push(this.handle, this.status());
      this.resolveDone();
    })();
  }

  /** follows a pod's log into the task log; a dropped stream resumes after the bytes already written */
  private follow(pod: string): void {
    const run = async () => {
      let written = 0;
      for (let tries = 0; tries < 20 && !this.streamAbort.signal.aborted; tries++) {
        let skip = written;
        try {
          await this.r.api.followLog(
            pod,
            'main',
            (chunk) => {
              if (skip >= chunk.length) {
                skip -= chunk.length;
                return;
              }
              const part = skip ? chunk.subarray(skip) : chunk;
              skip = 0;
              written += part.length;
              this.sink.write(pod, part);
            },
            this.streamAbort.signal,
          );
        } catch {
          // not streamable yet, or the connection dropped: look again below
        }
        const st = podState(this.r.watch.get(pod));
        if (st.terminated || st.deleting || !this.r.watch.get(pod)) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      this.sink.end(pod);
    };
    this.streams.set(pod, run());
  }
}
