/**
 * The Docker backend (backends.md §3): each task attempt is one container per assigned host,
 * started by an attached `docker run` (operators/docker-run.ts builds the exact command) whose
 * output lands byte for byte in the task log. Status is one `docker inspect` per engine endpoint
 * per tick for every live container; stop is one `docker stop -t <grace>` (or `kill`) per
 * endpoint; ended containers are removed in one `rm` per endpoint, and `release` removes whatever
 * this instance still has. Container names (`sflow-p<pid>-<task>-<node>`) with their pool hosts
 * are the handle's engine state (handle-state.ts), so a later driver finds them in the ledger.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { SflowError } from '../../util/sflow-error.js';
import type { TaskGpuClaims } from '../../gpu/task-claims.js';
import { grantsGpus } from '../../operators/docker-run.js';
import type { PlannedBackend, PlannedTask } from '../../plan/types.js';
import { raceAbort } from '../../util/abort.js';
import { errorMessage } from '../../util/errors.js';
import { spawnGroup } from '../../util/process-group.js';
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
} from '../backend.js';
import {
  DockerEngine,
  DRIVER_LABEL,
  reapLevel,
  reapOrphans,
  type ContainerState,
  type Endpoint,
} from '../container-engine.js';
import { driverId } from '../driver-identity.js';
import { memberLabel, spawnLabelled } from './labelled-client.js';
import { hostGpuClaims, withHostGpus } from './gpus.js';
import { dockerHosts, preflightHosts, type DockerHostRef } from './hosts.js';
import {
  byHost,
  inspectMembers,
  isRunning,
  memberState,
  membersOf,
  membersState,
  taskStatus,
  type Member,
} from './members.js';
import { memberCommand } from './member-command.js';
import { recoverMembers } from './recover-handle.js';
import { releaseMembers, removeMembers } from './remove-members.js';
import { EngineOutages } from './outages.js';

interface Live {
  handle: TaskHandle;
  /** undefined: another driver's attempt (known by its handle's ids only) */
  task: PlannedTask | undefined;
  members: Member[];
  stopped: boolean;
  final?: HandleStatus;
  gpus: boolean;
}

export class DockerBackend implements Backend {
  readonly name: string;
  readonly type = 'docker' as const;
  readonly engine: DockerEngine;
  private readonly live = new Map<string, Live>();
  private readonly hosts: DockerHostRef[];
  private claims: TaskGpuClaims | undefined;
  private readonly warned = new Set<string>();
  private readonly outages = new EngineOutages();
  /** on every container: which driver made it (orphan reaping, ../container-engine.ts) */
  private readonly labels = { [DRIVER_LABEL]: driverId() };

  constructor(
    private readonly planned: PlannedBackend<'docker'>,
    private readonly ctx: BackendContext,
  ) {
    this.name = planned.name;
    this.engine = new DockerEngine(ctx.env);
    this.hosts = dockerHosts(planned.config, planned.nodes.length);
  }

  private get pool(): boolean {
    return Array.isArray(this.planned.config.hosts) && this.planned.config.hosts.length > 0;
  }

  capabilities(): BackendCapabilities {
    return { ...this.planned.capabilities };
  }

  async preflight(signal: AbortSignal): Promise<void> {
    await preflightHosts(this.engine, this.name, this.hosts, [], signal, (l) => this.ctx.log(l));
  }

  async allocate(signal: AbortSignal, progress: AllocationProgress): Promise<Allocation> {
    signal.throwIfAborted();
    for (const line of await reapOrphans(
      this.engine,
      this.hosts.map((h) => h.endpoint),
      signal,
    ))
      this.ctx.log(line, reapLevel(line));
    let nodes = this.hosts.map((h) => h.node);
    if (this.ctx.gpuTasks && !this.pool) {
      progress('reading the GPUs of this host (nvidia-smi)');
      const declared =
        typeof this.planned.config.gpus_per_node === 'number' ? this.planned.config.gpus_per_node : null;
      nodes = await raceAbort(withHostGpus(nodes, declared), signal);
    }
    signal.throwIfAborted();
    this.claims = hostGpuClaims(nodes, this.pool, this.ctx, this.planned.config.wait_for_gpus);
    return { id: this.pool ? 'docker-pool' : 'docker', nodes, owned: false };
  }

  async launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    signal.throwIfAborted();
    const { task } = req;
    const got = this.claims && req.specs.length === 1 ? await this.claims.acquire(task, signal) : null;
    const members: Member[] = [];
    try {
      for (const spec of req.specs) {
        const { container, argv, env } = memberCommand({
          task,
          spec,
          config: this.planned.config,
          hosts: this.hosts,
          program: this.engine.program,
          labels: this.labels,
          got,
          baseEnv: req.baseEnv,
          engineEnv: this.ctx.env,
        });
        if (task.gpus?.length && grantsGpus(container.extraArgs) && !this.warned.has(task.name)) {
          this.warned.add(task.name);
          this.ctx.log(
            `task '${task.name}': --gpus in extra_args adds to sflow's device request; the container may get more GPUs than were reserved`,
          );
        }
        const group =
          req.specs.length > 1
            ? await spawnLabelled({
                argv,
                cwd: req.cwd,
                env,
                logPath: task.logPath,
                label: memberLabel(spec),
              })
            : await spawnGroup({ argv, cwd: req.cwd, env, logPath: task.logPath });
        members.push({ name: container.name, host: container.host, group, seen: false });
      }
    } catch (e) {
      for (const m of members) m.group?.killGroupNow();
      if (got) await this.claims?.done(task.name);
      throw new SflowError('LAUNCH_FAILED', `Task '${task.name}': ${errorMessage(e)}`, {
        phase: 'run',
        cause: e,
      });
    }
    const handle: TaskHandle = {
      v: HANDLE_VERSION,
      backend: this.name,
      type: this.type,
      runId: this.ctx.runId,
      task: task.name,
      attempt: req.attempt,
      state: 'SUBMITTED',
      nodes: req.specs.map((s) => s.node?.name ?? task.nodes[0]?.name ?? 'localhost'),
      ...membersState(members),
      ...(got ? { gpus: { indices: got.indices, uuids: got.uuids } } : {}),
      submittedAt: new Date().toISOString(),
      logPath: task.logPath,
    };
    req.record(handle);
    this.live.set(handleKey(handle), { handle, task, members, stopped: false, gpus: Boolean(got) });
    return handle;
  }

  /**
   * one inspect per endpoint for every member given; an endpoint whose engine does not answer is
   * noted (an outage: dockerd down or restarting, an ssh host that stops answering), so an attempt
   * that ends during or after one says so instead of reading as a plain exit code
   */
  private async states(
    members: Member[],
    signal: AbortSignal,
  ): Promise<Map<Member, ContainerState | undefined>> {
    const out = new Map<Member, ContainerState | undefined>();
    const errors: unknown[] = [];
    await Promise.all(
      [...byHost(members)].map(async ([host, names]) => {
        try {
          const got = await inspectMembers(
            this.engine,
            members.filter((m) => m.host === host && names.includes(m.name)),
            signal,
          );
          this.outages.answered(host);
          for (const [m, st] of got) out.set(m, st);
        } catch (e) {
          if (!signal.aborted) this.outages.failed(host, errorMessage(e));
          errors.push(e);
        }
      }),
    );
    if (errors.length) throw errors[0];
    return out;
  }

  private liveOf(h: TaskHandle): Live {
    const key = handleKey(h);
    let l = this.live.get(key);
    if (!l) {
      // a handle this instance did not launch (another driver's): its members from the ids
      l = {
        handle: h,
        task: undefined,
        members: membersOf(h),
        stopped: false,
        gpus: false,
      };
      this.live.set(key, l);
    }
    return l;
  }

  async poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    signal.throwIfAborted();
    const out = new Map<string, HandleStatus>();
    const lives = handles.map((h) => this.liveOf(h));
    const open = lives.filter((l) => !l.final);
    const states = await this.states(
      open.flatMap((l) => l.members),
      signal,
    );
    const now = Date.now();
    const ended: Live[] = [];
    for (const l of open) {
      const s = taskStatus(
        l.members.map((m) => memberState(m, states.get(m), now)),
        l.stopped,
      );
      if (s.state === 'EXITED') {
        const outage = s.error || s.exit?.code === 0 ? undefined : this.outageDuring(l);
        l.final = outage ? { ...s, error: outage } : s;
        ended.push(l);
      } else out.set(handleKey(l.handle), s);
    }
    if (ended.length) await this.finish(ended, signal);
    for (const l of lives) if (l.final) out.set(handleKey(l.handle), l.final);
    return out;
  }

  /** an engine outage on a host of the attempt since it was submitted, as the reason it ended */
  private outageDuring(l: Live): string | undefined {
    const since = Date.parse(l.handle.submittedAt);
    for (const m of l.members) {
      const o = this.outages.since(m.host, since);
      if (!o) continue;
      const code = m.last?.exitCode ?? l.final?.exit?.code;
      return `the Docker engine${m.host ? ` on ${m.host}` : ''} stopped answering while container ${m.name} ran (${o}); the container ended${code !== undefined && code !== null ? ` with ${code}` : ''} — an engine restart stops the containers it runs (no live-restore)`;
    }
    return undefined;
  }

  /** ended attempts: their containers go (peers of a failed member are killed with them), GPUs back */
  private async finish(ended: Live[], signal: AbortSignal): Promise<void> {
    const members = ended.flatMap((l) => l.members);
    await removeMembers(this.engine, members, signal);
    for (const m of members) m.group?.killGroupNow();
    for (const l of ended) if (l.gpus && l.task) await this.claims?.done(l.task.name);
  }

  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    const t0 = Date.now();
    const batch = AbortSignal.any([signal]);
    setMaxListeners(0, batch);
    const lives = handles.map((h) => this.liveOf(h));
    const members = lives.flatMap((l) => l.members);
    // states unknown (the inspect failed or timed out, e.g. a slow ssh host): stop every member
    // rather than none; `no such container` answers are ignored below
    const before = await this.states(members, batch).catch(() => undefined);
    const running = before
      ? members.filter((m) => isRunning(before.get(m)) || before.get(m)?.status === 'created')
      : members;
    for (const l of lives) l.stopped = true;
    const errors = new Map<Endpoint, string>();
    await Promise.all(
      [...byHost(running)].map(async ([host, names]) => {
        const r = opts.force
          ? await this.engine.kill(host, names, batch)
          : await this.engine.stop(host, names, opts.graceMs, batch);
        if (!r.ok && !/no such container|is not running/i.test(r.stderr))
          errors.set(host, r.stderr.trim() || 'failed');
      }),
    );
    const after = await this.states(members, batch).catch(
      () => new Map<Member, ContainerState | undefined>(),
    );
    // the attached clients end with their containers: the log is complete
    const drain = (m: Member): Promise<unknown> =>
      m.group ? Promise.race([m.group.exited, sleep(5_000, undefined, { ref: false })]) : Promise.resolve();
    await Promise.all(members.map(drain));
    const out = new Map<string, StopOutcome>();
    for (const l of lives) {
      const mine = running.filter((m) => l.members.includes(m));
      const killed = mine.some((m) => after.get(m)?.exitCode === 137);
      const signals =
        mine.length === 0 ? [] : opts.force ? ['SIGKILL'] : killed ? ['SIGTERM', 'SIGKILL'] : ['SIGTERM'];
      const error = l.members.map((m) => errors.get(m.host)).find(Boolean);
      out.set(handleKey(l.handle), {
        signals,
        gone: !l.members.some((m) => isRunning(after.get(m))),
        alreadyGone: mine.length === 0,
        elapsedMs: Date.now() - t0,
        ...(error ? { error } : {}),
      });
    }
    return out;
  }

  async inspect(h: TaskHandle, signal: AbortSignal): Promise<Inspection> {
    const l = this.liveOf(h);
    const states = await this.states(l.members, signal);
    const alive = l.members.some((m) => isRunning(states.get(m)) || states.get(m)?.status === 'created');
    const ended = l.members
      .map((m) => states.get(m))
      .find((s) => s && !isRunning(s) && s.status !== 'created');
    return {
      alive,
      state: alive ? 'RUNNING' : l.final || ended ? 'EXITED' : 'UNKNOWN',
      ...(l.final?.exit
        ? { exit: l.final.exit }
        : ended && !alive
          ? { exit: { code: ended.exitCode, signal: null } }
          : {}),
      where: [...new Set(l.handle.nodes)],
    };
  }

  async recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome> {
    // the kind's parse first: a state it cannot read is refused before any engine is asked
    const members = membersOf(record);
    return recoverMembers(this.engine, members, opts, signal);
  }

  async release(signal: AbortSignal, nodes?: string[]): Promise<void> {
    if (nodes !== undefined) return; // hosts are not held: nothing to give back early
    // every container this instance launched that no engine confirmed removed, ended ones too: an
    // ended attempt's removal in `finish` may have been cut short (the status watch closes at the
    // end of the teardown and aborts it), so `final` does not mean removed
    const left = [...this.live.values()]
      .filter((l) => l.task !== undefined)
      .flatMap((l) => l.members)
      .filter((m) => !m.removed);
    this.live.clear();
    await releaseMembers(this.engine, left, signal);
    await this.claims?.releaseAll();
  }

  async taskReady(handle: TaskHandle, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const l = this.live.get(handleKey(handle));
    if (l?.gpus && l.task && this.claims) await this.claims.ready(l.task);
  }
}
