/**
 * The Kubernetes backend (backends.md §5): pods through the API (client-node), one per reserved
 * node of a task, followed through one watch of the run's pods, logs streamed into the task log,
 * everything the run made deleted by its label. Pieces: kube-options.ts (credentials, flags),
 * preflight.ts (access reviews), reservation.ts (placeholder pods, GPU hand-off), task-pods.ts /
 * merged-pods.ts (what an attempt creates), attempt.ts (its status and logs),
 * collect.ts (output copy), probe-pod.ts (in-cluster probes), cleanup.ts (deletion, reaping).
 */
import { setMaxListeners } from 'node:events';
import { SflowError } from '../../util/sflow-error.js';
import type { PlannedBackend } from '../../plan/types.js';
import type { ProbeTransport } from '../../probes/types.js';
import { errorMessage } from '../../util/errors.js';
import {
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
import { PodAttempt } from './attempt.js';
import { shipArtifacts } from './artifacts.js';
import { apiMessage, KubeApi } from './client.js';
import { deleteByLabel, staleRuns } from './cleanup.js';
import { startCollect } from './collect.js';
import type { RdmaFound } from './dra.js';
import { loadKubeTarget } from './kube-options.js';
import { launchMerged, MergedPods } from './merged-pods.js';
import { L_ATTEMPT, L_TASK, labelValue, runNames, selector } from './names.js';
import { driverId } from '../driver-identity.js';
import type { K8sRun } from './run-context.js';
import { PodWatch } from './pod-watch.js';
import { accessPreflight } from './preflight.js';
import { ProbePod } from './probe-pod.js';
import { Reservation } from './reservation.js';
import { readRunRecords, writeRunRecord } from './run-record.js';
import { k8sSettings, type K8sSettings } from './settings.js';
import { launchTaskPods, type LaunchCore } from './task-pods.js';
import { COLLECT_MARKER } from './pod-script.js';
import { detectRdma } from './rdma-detect.js';
import { stopAttempts } from './stop.js';
import { mpiSettings } from './mpi-pods.js';
import { abandonMpiJob, deleteMpiJob, launchMpiJob, mpiJobServed } from './mpijob-launch.js';
import type { OperatorConfig } from '../../operators/index.js';
import { engineStateOf } from '../handle-state.js';
import { kubernetesHandleState } from './handle-state.js';

export class KubernetesBackend implements Backend {
  readonly name: string;
  readonly type = 'kubernetes' as const;
  readonly settings: K8sSettings;
  private api: KubeApi | undefined;
  /** the APIs `recover` made, by namespace */
  private readonly recoverApis = new Map<string, KubeApi>();
  private watchPods: PodWatch | undefined;
  private reservation: Reservation | undefined;
  private readonly attempts = new Map<string, PodAttempt>();
  private readonly watchers = new Set<WatchHooks>();
  private readonly merged: MergedPods;
  private probePod: ProbePod | undefined;
  private claims = false;
  private mpiJobs = false;
  private mpiJobServed: Promise<boolean> | undefined;
  private mpiPodsNoted = false;
  private artifactsP: ReturnType<typeof shipArtifacts> | undefined;
  private rdma: RdmaFound = { hcas: [], gkeNetworks: [] };
  private released = false;

  constructor(
    private readonly planned: PlannedBackend<'kubernetes'>,
    private readonly ctx: BackendContext,
  ) {
    this.name = planned.name;
    this.settings = k8sSettings(planned, ctx.options);
    this.merged = new MergedPods(
      () => this.run(),
      (h, s) => this.push(h, s),
    );
  }

  capabilities(): BackendCapabilities {
    return { ...this.planned.capabilities };
  }

  /** the run's shared state; valid after preflight */
  run(): K8sRun {
    if (!this.api || !this.watchPods) throw new Error('Kubernetes backend used before preflight');
    return {
      api: this.api,
      watch: this.watchPods,
      settings: this.settings,
      run: runNames(this.ctx.runId),
      backend: this.name,
      log: (m, level) => this.ctx.log(m, level),
    };
  }

  /** the client and the run's watch, from the kubeconfig the command line names (once) */
  private connect(): void {
    if (this.api) return;
    const target = loadKubeTarget(this.settings.namespace, this.ctx.options, this.ctx.env);
    for (const w of target.flags.warnings) this.ctx.log(w);
    this.settings.namespace = target.namespace;
    this.api = new KubeApi(target);
    this.watchPods = new PodWatch(this.api, selector(runNames(this.ctx.runId)));
    writeRunRecord(this.ctx.runDir, this.name, {
      namespace: target.namespace,
      kubeconfig: target.source,
      context: target.kc.getCurrentContext(),
      runId: this.ctx.runId,
      driver: driverId(),
    });
  }

  async preflight(signal: AbortSignal): Promise<void> {
    this.connect();
    if (this.ctx.env.SFLOW_SKIP_K8S_PREFLIGHT === '1') return;
    for (const w of await accessPreflight(this.api!, this.name, this.settings.scheduling === 'dra', signal))
      this.ctx.log(w);
  }

  async allocate(signal: AbortSignal, progress: AllocationProgress): Promise<Allocation> {
    this.connect();
    const r = this.run();
    await this.reapStale(signal);
    await this.watchPods!.start();
    this.watchPods!.on((pod) => this.onPod(pod.metadata?.labels ?? {}));
    this.reservation = new Reservation(r, this.ctx.gpuTasks);
    this.released = false;
    const nodes = await this.reservation.allocate(signal, progress);
    if (this.ctx.gpuTasks && this.settings.rdma !== 'disable')
      this.rdma = await detectRdma(r, this.reservation, signal);
    return { id: `sflow-${r.run.hash}`, nodes, owned: true };
  }

  private core(): LaunchCore {
    const r = this.run();
    return {
      r,
      ctx: this.ctx,
      reservation: this.reservation!,
      manifest: {
        settings: this.settings,
        run: r.run,
        backend: this.name,
        namespace: r.api.namespace,
        driver: driverId(),
      },
      rdma: this.rdma,
      channel:
        this.settings.computeDomain.channel && this.settings.computeDomain.channel !== 'auto'
          ? this.settings.computeDomain.channel
          : undefined,
      artifacts: (signal) => (this.artifactsP ??= shipArtifacts(r, this.ctx.artifacts ?? [], signal)),
      madeClaims: () => (this.claims = true),
    };
  }

  async launch(req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    if (!this.reservation)
      throw new SflowError('k8s.not_allocated', 'Kubernetes backend: launch before allocate', {
        phase: 'run',
      });
    const core = this.core();
    const t = req.task;
    try {
      if (t.colocated) return await launchMerged(core, this.merged, req, signal);
      if (t.operator.type === 'k8s_mpi' && (await this.mpiRoute(t.operator.config, signal)) === 'mpijob')
        return await this.launchMpiJob(core, req, signal);
      const { handle, pods, collect } = await launchTaskPods(core, req, signal);
      return this.track(handle, pods, collect);
    } catch (e) {
      if (e instanceof SflowError) throw e;
      throw new SflowError('LAUNCH_FAILED', `Task '${t.name}': ${errorMessage(e)}`, {
        phase: 'run',
        cause: e,
      });
    }
  }

  /**
   * `k8s_mpi` route of a task: `pods`, or the MPIJob route for `operator` and for `auto` where
   * the API serves kubeflow.org/v2beta1 mpijobs (asked once per run). `operator` without the
   * CRD is refused before any object of the task is made.
   */
  private async mpiRoute(op: OperatorConfig<'k8s_mpi'>, signal: AbortSignal): Promise<'pods' | 'mpijob'> {
    const route = mpiSettings(op).route;
    if (route === 'pods') return 'pods';
    this.mpiJobServed ??= mpiJobServed(this.run().api, signal);
    const served = await this.mpiJobServed.catch((e: unknown) => {
      this.mpiJobServed = undefined;
      throw e;
    });
    if (served) return 'mpijob';
    const mpi = op.mpi ?? {};
    const mpiJobOnly = (['launcher_creation_policy', 'launcher_discovery_timeout'] as const).filter(
      (k) => mpi[k] !== undefined,
    );
    if (route === 'auto' && mpiJobOnly.length && !this.mpiPodsNoted) {
      this.mpiPodsNoted = true;
      this.ctx.log(
        `Kubernetes backend '${this.name}': no MPIJob CRD (mpijobs.kubeflow.org) in namespace ${this.run().api.namespace}, so k8s_mpi runs on the pods route (mpi.route: auto), where ${mpiJobOnly.join(' / ')} do not apply`,
      );
    }
    if (route === 'operator')
      throw new SflowError(
        'k8s.mpijob_crd_missing',
        `k8s_mpi mpi.route: operator needs the Kubeflow MPI operator, but namespace ${this.run().api.namespace} serves no kubeflow.org/v2beta1 mpijobs (CRD mpijobs.kubeflow.org); install the mpi-operator or set mpi.route: pods (or auto)`,
        { phase: 'run' },
      );
    return 'pods';
  }

  private async launchMpiJob(core: LaunchCore, req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    this.mpiJobs = true;
    let job: string | undefined;
    try {
      const got = await launchMpiJob(core, req, signal, (name) => (job = name));
      const a = this.track(got.handle, got.pods, false, true);
      this.attempts.get(handleKey(a))!.mpiJob = got.job;
      return a;
    } catch (e) {
      if (job) await abandonMpiJob(this.run(), req, job);
      throw e;
    }
  }

  private track(handle: TaskHandle, pods: string[], collect: boolean, leaderOnly = false): TaskHandle {
    const r = this.run();
    const holder: { a?: PodAttempt } = {};
    const tap = collect
      ? (pod: string, line: string) => {
          const a = holder.a;
          const m = COLLECT_MARKER.exec(line);
          if (a && m && pod === pods[0] && !a.pendingWork) {
            a.scriptEnded();
            a.pendingWork = startCollect(r, a, pod, m[2], Number(m[1]), this.ctx.runDir);
          }
        }
      : undefined;
    const a = new PodAttempt(
      r,
      handle,
      pods,
      {
        push: (h, s) => this.push(h, s),
        podEnded: (p) => this.reservation?.podEnded(p),
        cleanup: (x) => this.cleanupAttempt(x),
      },
      tap,
      this.settings.reservation.timeoutS * 1000,
      leaderOnly,
    );
    holder.a = a;
    this.attempts.set(handleKey(handle), a);
    a.update();
    return handle;
  }

  private onPod(labels: Record<string, string>): void {
    const task = labels[L_TASK];
    const attempt = labels[L_ATTEMPT];
    if (!task) return;
    for (const a of this.attempts.values())
      if (labelValue(a.handle.task) === task && String(a.handle.attempt) === attempt) a.update();
    this.merged.onPod(labels);
  }

  private push(h: TaskHandle, s: HandleStatus): void {
    for (const w of this.watchers) w.onStatus(h, s);
  }

  watch(hooks: WatchHooks, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.watchers.add(hooks);
    signal.addEventListener('abort', () => this.watchers.delete(hooks), { once: true });
  }

  async poll(handles: TaskHandle[], signal: AbortSignal): Promise<Map<string, HandleStatus>> {
    if (this.watchPods && !this.watchPods.healthy) await this.watchPods.list(signal);
    const out = new Map<string, HandleStatus>();
    for (const h of handles) {
      const key = handleKey(h);
      const a = this.attempts.get(key);
      if (a) {
        a.update();
        out.set(key, a.status());
      } else {
        const m = this.merged.status(h);
        if (m) out.set(key, m);
      }
    }
    return out;
  }

  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    const batch = AbortSignal.any([signal]);
    setMaxListeners(0, batch);
    const own = handles.filter((h) => this.attempts.has(handleKey(h)));
    const mergedOnes = handles.filter((h) => !this.attempts.has(handleKey(h)) && this.merged.has(h));
    const out = new Map<string, StopOutcome>();
    const [a, b] = await Promise.all([
      this.api
        ? stopAttempts(
            this.run(),
            own.map((h) => this.attempts.get(handleKey(h))!),
            opts,
            batch,
          )
        : new Map<string, StopOutcome>(),
      this.merged.stop(mergedOnes, opts, batch),
    ]);
    for (const [k, v] of [...a, ...b]) out.set(k, v);
    for (const h of handles)
      if (!out.has(handleKey(h)))
        out.set(handleKey(h), { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 });
    return out;
  }

  async inspect(h: TaskHandle, signal: AbortSignal): Promise<Inspection> {
    signal.throwIfAborted();
    const a = this.attempts.get(handleKey(h));
    if (a) {
      a.update();
      const s = a.status();
      return {
        alive: s.state !== 'EXITED',
        state: s.state,
        ...(s.exit ? { exit: s.exit } : {}),
        where: h.nodes,
      };
    }
    return this.merged.inspect(h) ?? { alive: false, state: 'UNKNOWN' };
  }

  async recover(record: TaskHandle, opts: StopOptions, signal: AbortSignal): Promise<RecoverOutcome> {
    // the kind's parse first: a state it cannot read is refused before the cluster is asked
    const state = engineStateOf(kubernetesHandleState, record);
    // each attempt in its own namespace: a run resumed with another --kube-namespace has
    // attempts of one backend in two
    let api = this.api?.namespace === state.namespace ? this.api : this.recoverApis.get(state.namespace);
    if (!api) {
      // the run's record names its kubeconfig and context; flags given to `sflow recover` win
      const rec = readRunRecords(this.ctx.runDir).find((x) => x.backend === record.backend);
      const given = Object.fromEntries(Object.entries(this.ctx.options).filter(([, v]) => v !== undefined));
      const options = rec ? { kubeconfig: rec.kubeconfig, kubeContext: rec.context, ...given } : given;
      const target = loadKubeTarget(this.settings.namespace, options, this.ctx.env);
      api = new KubeApi({ ...target, namespace: state.namespace });
      this.recoverApis.set(state.namespace, api);
      this.api ??= api;
    }
    const { recoverAttempt } = await import('./recover.js');
    return recoverAttempt(api, record, opts, signal);
  }

  async release(signal: AbortSignal, nodes?: string[]): Promise<void> {
    if (!this.api || this.released) return;
    if (nodes !== undefined) return; // nodes are held until the run ends (placeholders already handed off)
    this.released = true;
    await this.probePod?.close();
    const r = this.run();
    const res = await deleteByLabel(
      r.api,
      selector(r.run),
      { claims: this.claims, mpiJobs: this.mpiJobs },
      signal,
    );
    for (const e of res.errors)
      this.ctx.log(`Kubernetes backend '${this.name}': could not delete the run's ${e}`);
    await this.watchPods!.waitFor(
      () => (this.watchPods!.all().length === 0 ? true : undefined),
      8_000,
      signal,
    );
    this.watchPods!.stop();
  }

  /** tcp/http probes of this backend's tasks run inside the cluster (SFLOW_K8S_PROBE_VIA_POD=0: from the driver) */
  probeTransport(): ProbeTransport | undefined {
    if (this.ctx.env.SFLOW_K8S_PROBE_VIA_POD === '0' || !this.api) return undefined;
    this.probePod ??= new ProbePod(this.run());
    return this.probePod;
  }

  private async cleanupAttempt(a: PodAttempt): Promise<void> {
    const r = this.run();
    const sel = selector(r.run, {
      [L_TASK]: labelValue(a.handle.task),
      [L_ATTEMPT]: String(a.handle.attempt),
    });
    const live =
      !!a.mpiJob ||
      a.pods.some((p) => {
        const pod = r.watch.get(p);
        return pod && !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '');
      });
    await Promise.all([
      live
        ? r.api.call('delete', 'deletecollection', 'pods', sel, (o) =>
            r.api.core.deleteCollectionNamespacedPod(
              { namespace: r.api.namespace, labelSelector: sel, gracePeriodSeconds: 0 },
              o,
            ),
          )
        : undefined,
      r.api.call('delete', 'deletecollection', 'secrets', sel, (o) =>
        r.api.core.deleteCollectionNamespacedSecret({ namespace: r.api.namespace, labelSelector: sel }, o),
      ),
      a.mpiJob ? deleteMpiJob(r.api, a.mpiJob) : undefined,
    ]);
  }

  private async reapStale(signal: AbortSignal): Promise<void> {
    const r = this.run();
    try {
      const stale = await staleRuns(r.api, signal);
      for (const [label, runId] of stale) {
        if (label === r.run.label) continue;
        const res = await deleteByLabel(r.api, `sflow/run=${label}`, { claims: true, mpiJobs: true }, signal);
        this.ctx.log(
          `Kubernetes backend '${this.name}': deleted the objects of run ${runId}, whose driver on this host is gone${res.errors.length ? ` (not all: ${res.errors.join('; ')})` : ''}`,
          res.errors.length ? 'warning' : 'info',
        );
      }
    } catch (e) {
      signal.throwIfAborted();
      this.ctx.log(
        `Kubernetes backend '${this.name}': could not look for leftovers of earlier runs: ${apiMessage(e)}`,
      );
    }
  }
}
