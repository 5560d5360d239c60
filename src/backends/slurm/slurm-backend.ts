/**
 * The Slurm backend (backends.md §4): the allocation is the job sflow runs in, or one it creates
 * with `salloc --no-shell`; every srun task is a job step started by an `srun --jobid …` client on
 * the driver, in its own process group, whose stdout/stderr go straight to the task log. Status is
 * pushed (`watch`): the client's exit is the attempt's exit code; which step it created (and so
 * SUBMITTED → RUNNING and the step id for the ledger) comes from one `scontrol show step` per tick
 * for the whole allocation, only while some step has no id yet. Stop is one `scancel --signal`
 * call for all steps, grace, one `scancel --signal=KILL`. Release cancels only an owned job.
 */
import { spawnSync } from 'node:child_process';
import { basename } from 'node:path';
import { SflowError } from '../../util/sflow-error.js';
import { processStartTime } from '../../util/process-liveness.js';
import type { PlannedBackend, PlannedNode } from '../../plan/types.js';
import { errorMessage } from '../../util/errors.js';
import { sleep } from '../../util/sleep.js';
import { onPath } from '../../util/on-path.js';
import { spawnGroup, type GroupHandle } from '../../util/process-group.js';
import {
  HANDLE_VERSION,
  handleKey,
  type Allocation,
  type AllocationProgress,
  type Backend,
  type BackendCapabilities,
  type BackendContext,
  type HandleStatus,
  type Inspection,
  type LaunchRequest,
  type RecoverOutcome,
  type StopOptions,
  type StopOutcome,
  type TaskHandle,
  type WatchHooks,
} from '../backend.js';
import { allocateTimeoutMs, inheritedJob, runSalloc, sallocArgv } from './allocate.js';
import { filterJobNodes } from './node-filters.js';
import { writeAllocationLine } from './allocation-record.js';
import {
  announceRunning,
  attemptStatus,
  matchSteps,
  shortHost,
  stepExit,
  stepsOf,
  type LiveAttempt,
} from './live-steps.js';
import { discoverNodes } from './nodes.js';
import { stagePrelude, stepGpuEnv, withGpuTopology } from './gpu-env.js';
import { oneLineFields } from './steps.js';
import { callFailure, slurmExec, type SlurmExec } from './slurm-exec.js';
import { stopAttempts } from './stop.js';
import { launchFailure, logTail, startTimeout, stepStartTimeoutMs } from './step-start.js';
import { readStepTimes, stepStamp } from './step-stamp.js';
import { engineFields, engineStateOf } from '../handle-state.js';
import { slurmHandleState, slurmStepIds, type SlurmHandleState } from './handle-state.js';

const REQUIRED_TOOLS = ['salloc', 'srun', 'scontrol', 'scancel'];
const FIRST_SCAN_MS = 250;

export class SlurmBackend implements Backend {
  readonly name: string;
  readonly type = 'slurm' as const;
  readonly exec: SlurmExec;
  private readonly live = new Map<string, LiveAttempt>();
  private readonly watchers = new Set<WatchHooks>();
  private allocation: Allocation | undefined;
  private released = false;
  private cancelOnExit: (() => void) | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  /** the step scan in flight: a second caller (stop during a poll tick) waits for it */
  private scanning: Promise<void> | undefined;
  private readonly host = shortHost();
  /** [major, minor] from `scontrol --version` (preflight) */
  private slurmVersion: number[] | undefined;
  /** how long an srun client may wait for its step (SFLOW_SLURM_STEP_START_TIMEOUT) */
  private readonly stepStartMs: number;

  /** `exec`: every Slurm CLI call goes through it (tests hand in a fake Slurm) */
  constructor(
    private readonly planned: PlannedBackend<'slurm'>,
    private readonly ctx: BackendContext,
    exec: SlurmExec = slurmExec(ctx.env),
  ) {
    this.name = planned.name;
    this.exec = exec;
    this.stepStartMs = stepStartTimeoutMs(ctx.env);
  }

  capabilities(): BackendCapabilities {
    return { ...this.planned.capabilities };
  }

  /** the allocation's job id (after allocate) */
  get jobId(): string | undefined {
    return this.allocation?.id;
  }

  async preflight(signal: AbortSignal): Promise<void> {
    const missing = REQUIRED_TOOLS.filter((tool) => !onPath(tool, this.ctx.env.PATH));
    if (missing.length)
      throw new SflowError(
        'preflight.slurm_tools',
        `backend '${this.name}' (slurm): ${missing.join(', ')} not found on PATH`,
        {
          phase: 'preflight',
          hint: 'load the Slurm module (e.g. `module load slurm`) or add the Slurm client tools to PATH',
        },
      );
    const [ping, version] = await Promise.all([
      this.exec('scontrol', ['ping'], { signal, timeoutMs: 15_000, retries: 1 }),
      this.exec('scontrol', ['--version'], { signal, timeoutMs: 15_000, retries: 1 }),
    ]);
    signal.throwIfAborted();
    this.slurmVersion = /(\d+)\.(\d+)/.exec(version.stdout)?.slice(1, 3).map(Number);
    if (!ping.ok)
      throw new SflowError(
        'preflight.slurm_controller',
        `backend '${this.name}' (slurm): ${callFailure('scontrol', ['ping'], ping)}`,
        {
          phase: 'preflight',
          hint: 'the Slurm controller does not answer from this machine: check SLURM_CONF and that slurmctld is up',
        },
      );
  }

  async allocate(signal: AbortSignal, progress: AllocationProgress): Promise<Allocation> {
    signal.throwIfAborted();
    const cfg = this.planned.config;
    const gpn = typeof cfg.gpus_per_node === 'number' ? cfg.gpus_per_node : null;
    const inherited = inheritedJob(this.ctx.env);
    let jobId: string;
    let nodeList: string;
    let owned = false;
    if (inherited) {
      ({ jobId, nodeList } = inherited);
      progress(`reusing Slurm job ${jobId} (SLURM_JOB_ID) on ${nodeList}: no salloc`);
      this.note(writeAllocationLine(this.ctx.runDir, { op: 'allocated', backend: this.name, jobId, owned }));
    } else {
      const argv = Array.isArray(this.planned.allocateCommand)
        ? this.planned.allocateCommand
        : sallocArgv(cfg, String(cfg.job_name ?? 'sflow'));
      let pending: string | undefined;
      try {
        ({ jobId, nodeList } = await runSalloc(argv, {
          exec: this.exec,
          signal,
          progress,
          timeoutMs: allocateTimeoutMs(this.ctx.env),
          onJobId: (id) => {
            pending = id;
            this.armExitCancel(id);
            this.note(
              writeAllocationLine(this.ctx.runDir, {
                op: 'allocated',
                backend: this.name,
                jobId: id,
                owned: true,
              }),
            );
          },
        }));
      } catch (e) {
        if (pending) await this.cancelJob(pending); // a queued job is not left behind
        throw e;
      }
      owned = true;
    }
    let nodes: PlannedNode[];
    try {
      if (!nodeList) nodeList = await this.jobNodeList(jobId, signal);
      // `scontrol getaddrs` exists from Slurm 23.02 on
      const v = this.slurmVersion;
      const getaddrs = !v || v[0] > 23 || (v[0] === 23 && v[1] >= 2);
      nodes = await discoverNodes(this.exec, jobId, nodeList, gpn, signal, (m) => this.ctx.log(m), getaddrs);
      if (inherited) {
        const kept = await filterJobNodes(this.exec, this.name, jobId, nodes, cfg, signal);
        if (kept) {
          progress(
            `include_nodes/exclude_nodes: using ${kept.map((n) => n.name).join(', ')} of Slurm job ${jobId}`,
          );
          nodes = kept;
        }
      }
      const want = typeof cfg.nodes === 'number' ? cfg.nodes : null;
      if (inherited && want !== null && want !== nodes.length)
        this.ctx.log(
          `backend '${this.name}': the recipe asks for ${want} node(s); Slurm job ${jobId} has ${nodes.length}: planning on the job's nodes`,
        );
      if (this.ctx.gpuTasks)
        nodes = await withGpuTopology(this.exec, (l) => this.ctx.log(l), jobId, nodes, signal);
    } catch (e) {
      if (owned) await this.cancelJob(jobId);
      throw e;
    }
    this.allocation = { id: jobId, nodes, owned };
    this.released = false;
    if (this.ctx.gpuTasks) stagePrelude(this.ctx.runDir, (l) => this.ctx.log(l));
    return this.allocation;
  }

  async launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    signal.throwIfAborted();
    const { task } = req;
    const spec = req.specs[0];
    const step = basename(spec.argv[0] ?? '') === 'srun';
    const env: Record<string, string> = {
      ...req.baseEnv,
      ...spec.env,
      ...stepGpuEnv(this.allocation?.nodes ?? [], task.nodes, task.gpus),
    };
    // Slurm steps see every card of the node; the in-step prelude narrows CUDA_VISIBLE_DEVICES (0.3.1)
    if (step) delete env.NVIDIA_VISIBLE_DEVICES;
    // this attempt's start stamps are the lines written after this point
    const stamp = step ? stepStamp(task.outputDir) : undefined;
    let group: GroupHandle;
    try {
      group = await spawnGroup({ argv: spec.argv, cwd: req.cwd, env, logPath: task.logPath });
    } catch (e) {
      throw new SflowError('LAUNCH_FAILED', `Task '${task.name}': ${errorMessage(e)}`, {
        phase: 'run',
        cause: e,
      });
    }
    const startTime = processStartTime(group.pid);
    const handle: TaskHandle = {
      v: HANDLE_VERSION,
      backend: this.name,
      type: this.type,
      runId: this.ctx.runId,
      task: task.name,
      attempt: req.attempt,
      state: step ? 'SUBMITTED' : 'RUNNING',
      nodes: task.nodes.map((n) => n.name),
      process: {
        pid: group.pid,
        pgid: group.pgid,
        host: this.host,
        ...(startTime !== null ? { startTime } : {}),
      },
      ...engineFields(slurmHandleState, {
        kind: 'slurm',
        ...(this.allocation ? { job: this.allocation.id } : {}),
        steps: [],
      }),
      submittedAt: new Date(group.startedAt).toISOString(),
      logPath: task.logPath,
    };
    req.record(handle);
    const a: LiveAttempt = {
      handle,
      task,
      group,
      step,
      running: !step,
      stopped: false,
      launchedAt: Date.now(),
      ...(stamp ? { stamp } : { startedAt: group.startedAt }),
    };
    this.live.set(handleKey(handle), a);
    void group.exited.then((e) => {
      a.exit = step ? stepExit(e.code, e.signal, a.stopped) : { code: e.code, signal: e.signal };
      // srun said its step did not start (or lost its node): the attempt fails with srun's words
      if (a.startTimedOutMs !== undefined)
        a.startError = startTimeout(a.startTimedOutMs, logTail(task.logPath)); // srun's last words included
      else if (step && !a.stopped && !a.startError && (e.code ?? 0) !== 0)
        a.startError = launchFailure(logTail(task.logPath));
      // the step's own stamps; srun returns when its step ended, so its exit stands in for a missing end
      const own = a.stamp ? readStepTimes(a.stamp) : {};
      a.startedAt ??= own.start;
      const end = own.end ?? (e.error ? undefined : e.at);
      if (end !== undefined) a.endedAt = end;
      this.push(a, attemptStatus(a));
    });
    if (step) this.scheduleScan(FIRST_SCAN_MS);
    return handle;
  }

  watch(hooks: WatchHooks, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.watchers.add(hooks);
    signal.addEventListener('abort', () => this.watchers.delete(hooks), { once: true });
  }

  async poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    const out = new Map<string, HandleStatus>();
    const own = handles.map((h) => this.live.get(handleKey(h)));
    if (this.allocation && own.some((a) => a?.step && !a.stepId && !a.exit)) await this.scan(signal, false);
    // another driver's handles: their steps through the kind's parse (a state it cannot read throws)
    const foreign = new Map<TaskHandle, SlurmHandleState>();
    handles.forEach((h, i) => own[i] || foreign.set(h, engineStateOf(slurmHandleState, h)));
    const seen = foreign.size ? await this.foreignSteps([...foreign.values()], signal) : new Set<string>();
    handles.forEach((h, i) => {
      const a = own[i];
      if (a) out.set(handleKey(h), attemptStatus(a));
      else {
        const st = foreign.get(h);
        const steps = st ? slurmStepIds(st) : [];
        const alive = steps.some((id) => seen.has(id)) || this.clientAlive(h);
        out.set(
          handleKey(h),
          alive ? { state: steps.length ? 'RUNNING' : 'SUBMITTED' } : { state: 'EXITED' },
        );
      }
    });
    return out;
  }

  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    // ids of steps created since the last tick, before signalling: a step without an id is stopped
    // through its srun client, and srun ends its step at once on SIGTERM (no grace). A step may
    // reach scontrol a moment after its client started: up to three looks, 200 ms apart.
    const unnamed = () => [...this.live.values()].some((a) => a.step && !a.stepId && !a.exit);
    for (let look = 0; look < 3 && unnamed() && !signal.aborted; look++) {
      if (look) await sleep(200, signal);
      await this.scan(signal, false).catch(() => undefined);
    }
    const waiting = handles
      .map((h) => this.live.get(handleKey(h)))
      .filter((a) => a?.step && !a.stepId && !a.exit);
    const out = await stopAttempts(this.exec, handles, (h) => this.live.get(handleKey(h)), opts, signal);
    if (waiting.length && this.allocation)
      await this.cancelLateSteps(new Set(waiting.map((a) => a!.group.pid)));
    return out;
  }

  /** a client stopped while it waited may have created its step at that moment: cancel such steps */
  private async cancelLateSteps(pids: Set<number>): Promise<void> {
    const r = await stepsOf(this.exec, this.allocation!.id, AbortSignal.timeout(15_000));
    if ('error' in r) return;
    const late = r.steps
      .filter((s) => shortHost(s.srunHost) === this.host && pids.has(s.srunPid))
      .map((s) => s.id);
    if (late.length)
      await this.exec('scancel', ['--signal=KILL', ...late], { timeoutMs: 15_000, retries: 1 });
  }

  async inspect(h: TaskHandle, signal: AbortSignal): Promise<Inspection> {
    const s = (await this.poll([h], signal)).get(handleKey(h));
    const state = s?.state ?? 'UNKNOWN';
    return {
      alive: state !== 'EXITED' && state !== 'UNKNOWN',
      state,
      ...(s?.exit ? { exit: s.exit } : {}),
      where: h.nodes,
    };
  }

  async recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome> {
    // the kind's parse first: a state it cannot read is refused, never taken for "not running"
    const steps = slurmStepIds(engineStateOf(slurmHandleState, record));
    const seen = (await this.poll([record], signal)).get(handleKey(record));
    const what = steps.length ? `step ${steps.join(',')}` : `srun client pid ${record.process?.pid ?? '?'}`;
    if (!seen || seen.state === 'EXITED')
      return { found: false, detail: `${what} of ${record.task} is not running` };
    const stop = (await this.stop([record], opts, signal)).get(handleKey(record));
    return {
      found: true,
      ...(stop ? { stop } : {}),
      detail: `${what} of ${record.task} cancelled (${stop?.signals.join('+') || '-'})`,
    };
  }

  async release(signal: AbortSignal, nodes?: string[]): Promise<void> {
    // a Slurm allocation cannot give single nodes back: partial release keeps them until the end
    if (nodes !== undefined || this.released || !this.allocation) return;
    this.released = true;
    clearTimeout(this.scanTimer);
    const { id, owned } = this.allocation;
    if (!owned) return;
    signal.throwIfAborted();
    await this.cancelJob(id);
  }

  /** the node list of a granted job (salloc names it only on some clusters) */
  private async jobNodeList(jobId: string, signal: AbortSignal): Promise<string> {
    const args = ['-o', 'show', 'job', jobId];
    const r = await this.exec('scontrol', args, { signal, retries: 2 });
    const list = r.ok ? oneLineFields(r.stdout.split('\n')[0] ?? '').NodeList : undefined;
    if (!list || list === '(null)')
      throw new SflowError(
        'run.slurm_nodes',
        `cannot read the node list of Slurm job ${jobId}: ${callFailure('scontrol', args, r)}`,
        {
          phase: 'run',
        },
      );
    return list;
  }

  /** the step ids Slurm still lists in the jobs of foreign handles' states (one call per job) */
  private async foreignSteps(states: SlurmHandleState[], signal: AbortSignal): Promise<Set<string>> {
    const jobs = new Set(states.flatMap((s) => (s.job !== undefined && s.steps.length ? [s.job] : [])));
    const seen = new Set<string>();
    for (const job of jobs) {
      const r = await stepsOf(this.exec, job, signal);
      if ('error' in r) throw new Error(r.error);
      for (const s of r.steps) seen.add(s.id);
    }
    return seen;
  }

  /** an srun client recorded on this machine still runs (same pid and start time) */
  private clientAlive(h: TaskHandle): boolean {
    const p = h.process;
    if (!p || shortHost(p.host) !== this.host || p.pgid <= 1) return false;
    const now = processStartTime(p.pid);
    return now !== null && (p.startTime === undefined || now === p.startTime);
  }

  private scheduleScan(ms: number): void {
    if (this.scanTimer || this.released) return;
    this.scanTimer = setTimeout(() => {
      this.scanTimer = undefined;
      void this.scan(AbortSignal.timeout(30_000), true).finally(() => {
        if ([...this.live.values()].some((a) => a.step && !a.stepId && !a.exit))
          this.scheduleScan(Math.max(250, this.planned.capabilities.pollIntervalMs / 2));
      });
    }, ms);
    this.scanTimer.unref();
  }

  /** one `scontrol show step` for the whole allocation: newly created steps become RUNNING */
  private scan(signal: AbortSignal, quiet: boolean): Promise<void> {
    if (!this.allocation) return Promise.resolve();
    // joining the tick's scan: its ids are what a stop needs (returning at once sent TERM to srun,
    // which ends the step without the grace, while the id was a moment away)
    if (this.scanning) return this.scanning.catch(() => undefined);
    const jobId = this.allocation.id;
    const run = async () => {
      this.stopStuckClients();
      const r = await stepsOf(this.exec, jobId, signal);
      if ('error' in r) {
        if (!quiet) throw new Error(r.error);
        return;
      }
      for (const a of matchSteps(this.live.values(), r.steps, this.host))
        void announceRunning(a, (x, st) => this.push(x, st));
    };
    const p = run().finally(() => {
      this.scanning = undefined;
    });
    this.scanning = p;
    return p;
  }

  /** srun clients still without a step past the bound: stopped, their attempt fails naming why */
  private stopStuckClients(): void {
    const bound = this.stepStartMs;
    const now = Date.now();
    for (const a of this.live.values()) {
      if (!a.step || a.stepId || a.exit || a.stopped || a.startError) continue;
      if (now - (a.launchedAt ?? now) < bound) continue;
      a.startTimedOutMs = bound;
      a.startError = startTimeout(bound, '');
      void a.group.stop(2_000);
    }
  }

  private push(a: LiveAttempt, s: HandleStatus): void {
    for (const w of this.watchers) w.onStatus(a.handle, s);
  }

  private async cancelJob(jobId: string): Promise<void> {
    const r = await this.exec('scancel', [jobId], { retries: 2, timeoutMs: 15_000 });
    if (!r.ok)
      this.ctx.log(`scancel ${jobId} failed: ${(r.stderr || r.stdout).trim() || `exit ${r.exitCode}`}`);
    else {
      this.cancelOnExit?.();
      this.cancelOnExit = undefined;
      this.note(
        writeAllocationLine(this.ctx.runDir, { op: 'released', backend: this.name, jobId, owned: true }),
      );
    }
  }

  /** if the driver exits without releasing (a crash), scancel the owned job on the way out (not on SIGKILL) */
  private armExitCancel(jobId: string): void {
    this.cancelOnExit?.();
    const onExit = () => {
      spawnSync('scancel', [jobId], { env: this.ctx.env, timeout: 5_000, stdio: 'ignore' });
    };
    process.once('exit', onExit);
    this.cancelOnExit = () => process.removeListener('exit', onExit);
  }

  private note(err: Error | undefined): void {
    if (err) this.ctx.log(`cannot write the Slurm allocation record in ${this.ctx.runDir}: ${err.message}`);
  }
}
