/**
 * Launching a task attempt as pods: its script ConfigMap, its environment Secret (`envFrom`; the
 * values never appear in a pod spec, a command line or a trace), an optional DRA claim template
 * per pod, and one pod per node of the task pinned to that node, handed GPUs through the node's
 * reservation. The handle is recorded as soon as the first pod was accepted.
 */
import type * as k8s from '@kubernetes/client-node';
import type { PlannedTask } from '../../plan/types.js';
import {
  HANDLE_VERSION,
  type BackendContext,
  type LaunchRequest,
  type NodeLaunchSpec,
  type TaskHandle,
} from '../backend.js';
import type { KubeApi } from './client.js';
import { engineFields } from '../handle-state.js';
import { kubernetesHandleState } from './handle-state.js';
import { claimTemplate, rdmaPatch, type RdmaFound } from './dra.js';
import { attemptBase, L_NODE, podName, taskLabels, type Role } from './names.js';
import { buildPod, SCRIPT_DIR, type ManifestContext, type PodPlan } from './pod-manifest.js';
import { collectTrap, containerCommand, splitCommand, stageDir } from './pod-script.js';
import type { Reservation } from './reservation.js';
import { launcherScript } from './mpi-launcher.js';
import { MPI_DIR, MPI_KEY_ENV, mpiSettings, newMpiKey, workerScript, type MpiSettings } from './mpi-pods.js';
import type { K8sRun } from './run-context.js';
import { k8sOperatorConfig, type K8sOperatorConfig } from './operator-config.js';

export interface LaunchCore {
  r: K8sRun;
  ctx: BackendContext;
  reservation: Reservation;
  manifest: ManifestContext;
  rdma: RdmaFound;
  channel: string | undefined;
  /** the run's file:// artifacts ConfigMap (made on first use) */
  artifacts(signal: AbortSignal): Promise<PodPlan['artifacts']>;
  /** a ResourceClaimTemplate was made (release deletes them) */
  madeClaims(): void;
}

/** GPUs each pod of the task asks for */
export function gpusPerPod(t: PlannedTask): number {
  if (t.gpuSlots) return t.gpuSlots.length;
  const count = t.resources?.gpus?.count ?? 0;
  return count > 0 ? Math.max(1, Math.floor(count / Math.max(1, t.nodes.length))) : 0;
}

/** sflow's env entries common to every node go in the Secret; the rest are plain per-pod values */
export function splitEnv(specs: NodeLaunchSpec[]): {
  common: Record<string, string>;
  perPod: k8s.V1EnvVar[][];
} {
  const common: Record<string, string> = {};
  for (const [k, v] of Object.entries(specs[0]?.env ?? {}))
    if (specs.every((s) => s.env[k] === v)) common[k] = v;
  const perPod = specs.map((s) =>
    Object.entries(s.env)
      .filter(([k]) => !(k in common))
      .map(([name, value]) => ({ name, value })),
  );
  return { common, perPod };
}

export function newHandle(core: LaunchCore, req: LaunchRequest, pods: string[]): TaskHandle {
  return {
    v: HANDLE_VERSION,
    backend: core.r.backend,
    type: 'kubernetes',
    runId: core.r.run.runId,
    task: req.task.name,
    attempt: req.attempt,
    state: 'SUBMITTED',
    nodes: req.task.nodes.map((n) => n.name),
    ...engineFields(kubernetesHandleState, { kind: 'kubernetes', namespace: core.r.api.namespace, pods }),
    submittedAt: new Date().toISOString(),
    logPath: req.task.logPath,
  };
}

export async function createObject(
  api: KubeApi,
  kind: 'configmaps' | 'secrets',
  body: k8s.V1ConfigMap | k8s.V1Secret,
  signal: AbortSignal,
): Promise<void> {
  const name = body.metadata?.name;
  await api.call(
    'write',
    'create',
    kind,
    name,
    (o) =>
      kind === 'configmaps'
        ? api.core.createNamespacedConfigMap({ namespace: api.namespace, body: body, ...api.create }, o)
        : api.core.createNamespacedSecret({ namespace: api.namespace, body: body, ...api.create }, o),
    { signal },
  );
}

export async function createPod(api: KubeApi, body: k8s.V1Pod, signal: AbortSignal): Promise<void> {
  await api.call(
    'write',
    'create',
    'pods',
    body.metadata?.name,
    (o) => api.core.createNamespacedPod({ namespace: api.namespace, body, ...api.create }, o),
    { signal },
  );
}

export interface Prepared {
  pods: k8s.V1Pod[];
  configMap: k8s.V1ConfigMap;
  secret?: k8s.V1Secret;
  claims: k8s.V1ResourceClaimTemplate[];
  /** the leader stages outputs for the driver's copy (collect) */
  collect: boolean;
}

type PrepareCore = Pick<LaunchCore, 'manifest' | 'rdma' | 'channel'> & {
  /** what building the objects reads of the run (the dry-run has no cluster behind it) */
  r: Pick<K8sRun, 'settings' | 'run' | 'backend' | 'log'>;
  /** k8s_mpi: the attempt's SSH key (golden tests give a fixed one) */
  mpiKey?: () => string;
};
type PrepareRequest = Pick<LaunchRequest, 'task' | 'attempt' | 'specs'>;

/** k8s_mpi plans one launch spec; its pods route has one pod per node of the task */
function attemptSpecs(req: PrepareRequest, mpi: MpiSettings | undefined): NodeLaunchSpec[] {
  const t = req.task;
  if (!(mpi && req.specs.length === 1 && t.nodes.length > 1)) return req.specs;
  return t.nodes.map((n, i) => ({
    ...req.specs[0],
    node: { name: n.name, ip: n.ip, index: n.index },
    nodeIndex: i,
    env: { ...req.specs[0].env, SFLOW_TASK_NODE_INDEX: String(i) },
  }));
}

/** what every pod of the attempt shares: names, settings, the script ConfigMap and env Secret */
interface AttemptParts {
  t: PlannedTask;
  op: K8sOperatorConfig;
  mpi: MpiSettings | undefined;
  specs: NodeLaunchSpec[];
  split: ReturnType<typeof splitCommand>;
  podNames: string[];
  outputRoot: string | undefined;
  passEnvs: boolean;
  perPod: k8s.V1EnvVar[][];
  configMap: k8s.V1ConfigMap;
  secret: k8s.V1Secret | undefined;
  meta: (name: string) => k8s.V1ObjectMeta;
  collect: boolean;
}

function attemptParts(core: PrepareCore, req: PrepareRequest, role: Role): AttemptParts {
  const { r, manifest } = core;
  const t = req.task;
  const s = r.settings;
  const op = k8sOperatorConfig(t.operator);
  const base = attemptBase(r.run, t.name, req.attempt);
  const labels = taskLabels(r.run, r.backend, role, t.name, req.attempt);
  const meta = (name: string): k8s.V1ObjectMeta => ({
    name,
    namespace: manifest.namespace,
    labels,
    annotations: { 'sflow/driver': manifest.driver, 'sflow/run-id': r.run.runId },
  });
  const mpi = t.operator.type === 'k8s_mpi' ? mpiSettings(op) : undefined;
  const specs = attemptSpecs(req, mpi);
  const spec0 = specs[0];
  const split = splitCommand(spec0.argv);
  const shellish = split !== null && /(^|\/)(ba|da|z|k)?sh$/.test(split.interpreter[0] ?? '');
  const collect = s.collect && shellish && specs.length === 1 && t.operator.type === 'k8s' && !t.colocated;
  const outputRoot = spec0.env.SFLOW_OUTPUT_DIR;
  const maxBytes =
    op.collect_max_file_size !== undefined ? Number(op.collect_max_file_size) : s.collectMaxBytes;
  const podNames = specs.map((_, i) => podName(base, i));
  const slots = mpi ? (mpi.slotsPerWorker ?? Math.max(1, gpusPerPod(t))) : 0;
  const script = split
    ? (collect && outputRoot
        ? collectTrap(
            { graceS: s.collectGraceS, maxBytes: Number.isFinite(maxBytes) ? maxBytes : s.collectMaxBytes },
            stageDir(outputRoot, podNames[0]),
          )
        : '') + split.script
    : '';
  const configMap: k8s.V1ConfigMap = {
    metadata: meta(`${base}-script`),
    data: mpi
      ? { 'task.sh': launcherScript(mpi, slots, script), 'worker.sh': workerScript(mpi) }
      : { 'task.sh': script },
  };
  const passEnvs = op.pass_envs !== false && op.pass_envs !== 'false';
  const { common, perPod } = splitEnv(specs);
  if (mpi) {
    // pass_envs: false keeps only what the launcher needs (the node addresses) and the key
    if (!passEnvs)
      for (const k of Object.keys(common)) if (k !== 'SFLOW_TASK_ASSIGNED_NODE_IPS') delete common[k];
    if (mpi.ompNumThreads !== null && common.OMP_NUM_THREADS === undefined)
      common.OMP_NUM_THREADS = String(mpi.ompNumThreads);
    common[MPI_KEY_ENV] = (core.mpiKey ?? newMpiKey)();
  }
  const secret: k8s.V1Secret | undefined =
    passEnvs || mpi ? { metadata: meta(`${base}-env`), type: 'Opaque', stringData: common } : undefined;
  return {
    t,
    op,
    mpi,
    specs,
    split,
    podNames,
    outputRoot,
    passEnvs,
    perPod,
    configMap,
    secret,
    meta,
    collect,
  };
}

/** Every object of one attempt, built without touching the cluster (golden tests read these). */
export function prepareTaskPods(
  core: PrepareCore,
  req: PrepareRequest,
  artifacts: PodPlan['artifacts'],
  role: Role = 'task',
): Prepared {
  const { r, manifest } = core;
  const s = r.settings;
  const a = attemptParts(core, req, role);
  const { t, op, mpi, specs, split, podNames, outputRoot, passEnvs, perPod, configMap, secret, meta } = a;
  const spec0 = specs[0];
  const gpus = gpusPerPod(t);
  const claims: k8s.V1ResourceClaimTemplate[] = [];
  const pods = specs.map((spec, i) => {
    const name = podNames[i];
    let claim: string | undefined;
    if (s.scheduling === 'dra' && gpus > 0) {
      claim = `${name}-gpus`;
      claims.push(claimTemplate(s, op, claim, meta(claim), gpus));
    }
    const plan: PodPlan = {
      name,
      role,
      task: t.name,
      attempt: req.attempt,
      ...(spec.node?.name ? { node: spec.node.name } : {}),
      nodeIndex: spec.nodeIndex,
      image: spec.image ?? String(op.image ?? s.reservation.image),
      command: containerCommand(spec0.argv, `${SCRIPT_DIR}/${mpi && i > 0 ? 'worker.sh' : 'task.sh'}`),
      env: passEnvs ? perPod[i] : mpi ? perPod[i].filter((e) => e.name === 'SFLOW_TASK_NODE_INDEX') : [],
      ...(secret ? { envSecret: secret.metadata!.name! } : {}),
      scriptConfigMap: configMap.metadata!.name!,
      ...(outputRoot ? { outputDir: outputRoot } : {}),
      ...(artifacts ? { artifacts } : {}),
      gpus,
      ...(claim ? { claimTemplate: claim } : {}),
      ...(gpus > 0 && core.channel ? { channelTemplate: core.channel } : {}),
      ...(gpus > 0
        ? { rdma: rdmaPatch(s.rdma, core.rdma, s.hostNetwork, process.env.SFLOW_RDMA_AFFINITY ?? 'auto') }
        : {}),
      extraLabels: { [L_NODE]: String(spec.nodeIndex) },
      ...(mpi
        ? {
            role: i === 0 ? 'mpi-launcher' : 'mpi-worker',
            extraVolumes: [{ name: 'sflow-mpi', emptyDir: {} }],
            extraMounts: [{ name: 'sflow-mpi', mountPath: MPI_DIR }],
            ...(i > 0 ? { ports: [{ name: 'sshd', containerPort: mpi.sshPort }] } : {}),
          }
        : {}),
    };
    if (!split) plan.command = spec.argv;
    return buildPod(manifest, op, plan, (m) => r.log(`Task '${t.name}': ${m}`));
  });
  return { pods, configMap, ...(secret ? { secret } : {}), claims, collect: a.collect };
}

/** Creates the attempt's objects; resolves with its handle (recorded once the first pod exists). */
export async function launchTaskPods(
  core: LaunchCore,
  req: LaunchRequest,
  signal: AbortSignal,
): Promise<{ handle: TaskHandle; pods: string[]; collect: boolean }> {
  const { r } = core;
  const artifacts = await core.artifacts(signal);
  const p = prepareTaskPods(core, req, artifacts);
  await createObject(r.api, 'configmaps', p.configMap, signal);
  if (p.secret) await createObject(r.api, 'secrets', p.secret, signal);
  for (const c of p.claims) {
    core.madeClaims();
    await r.api.call(
      'write',
      'create',
      'resourceclaimtemplates',
      String(c.metadata?.name),
      (o) => r.api.resource.createNamespacedResourceClaimTemplate({ namespace: r.api.namespace, body: c }, o),
      { signal },
    );
  }
  const names = p.pods.map((x) => x.metadata!.name!);
  const handle = newHandle(core, req, names);
  const gpus = gpusPerPod(req.task);
  let recorded = false;
  for (const pod of p.pods) {
    const node = pod.spec?.nodeSelector?.['kubernetes.io/hostname'];
    await core.reservation.place(
      node ?? '',
      gpus,
      async () => {
        await createPod(r.api, pod, signal);
        return [pod.metadata!.name!];
      },
      signal,
    );
    if (!recorded) {
      recorded = true;
      req.record(handle);
    }
  }
  return { handle, pods: names, collect: p.collect };
}
