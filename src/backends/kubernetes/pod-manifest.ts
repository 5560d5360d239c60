/**
 * The pod of one task on one node (backends.md §5.2–5.4), in three layers:
 *
 *  1. sflow's manifest — `restartPolicy: Never`, pinned by `kubernetes.io/hostname`, the script
 *     from a ConfigMap at /sflow/run, the environment from a temporary Secret via `envFrom`
 *     (per-node values such as SFLOW_TASK_NODE_INDEX as plain `env`), `file://` artifacts from a
 *     ConfigMap at their own paths, a writable emptyDir at the output root, /dev/shm, the
 *     backend's volumes, GPUs as a device-plugin limit or a DRA claim, sflow's labels;
 *  2. the operator's curated fields (image, pull policy and secrets, service account, root,
 *     shm_size, cpu/memory requests and limits, env, restart, host_network, node_selector, tty,
 *     working_dir, security contexts, ports, lifecycle, runtime/priority class, grace period,
 *     labels, annotations);
 *  3. `container_overrides` / `pod_overrides`, deep-merged last.
 */
import type * as k8s from '@kubernetes/client-node';
import { asWritten, deepMerge, isRawObject as isObj } from './deep-merge.js';
import { A_DRIVER, A_RUN_ID, L_NODE, taskLabels, type Role, type RunNames } from './names.js';
import type { K8sSettings } from './settings.js';
import type { K8sOperatorConfig } from './operator-config.js';

export const SCRIPT_DIR = '/sflow/run';
const NODE_NAME_ENV = 'SFLOW_TASK_NODE_NAME';
/** pods whose container runs a task's script (not the reservation or probe pods) */
const RUNS_TASKS: ReadonlySet<Role> = new Set<Role>(['task', 'merged', 'mpi-launcher', 'mpi-worker']);

export interface ManifestContext {
  settings: K8sSettings;
  run: RunNames;
  backend: string;
  namespace: string;
  /** `sflow/driver` annotation (host:pid:start) */
  driver: string;
}

export interface PodPlan {
  name: string;
  role: Role;
  task: string;
  attempt: number;
  /** node to pin to; absent: the scheduler places it */
  node?: string;
  nodeIndex: number;
  image: string;
  command: string[];
  /** plain per-pod values (node index, leader address) */
  env: k8s.V1EnvVar[];
  /** Secret holding the task environment (envFrom) */
  envSecret?: string;
  /** ConfigMap mounted at /sflow/run */
  scriptConfigMap?: string;
  /** output root to mount an emptyDir at */
  outputDir?: string;
  artifacts?: { configMap: string; files: Array<{ key: string; path: string }> };
  gpus: number;
  /** DRA: the pod's ResourceClaimTemplate */
  claimTemplate?: string;
  /** compute-domain channel claim template (GPU pods) */
  channelTemplate?: string;
  /** RDMA additions (env, capabilities, resources, volumes) */
  rdma?: RdmaPatch;
  /** further volumes, mounts, containers (k8s_mpi's sshd) */
  extraVolumes?: k8s.V1Volume[];
  extraMounts?: k8s.V1VolumeMount[];
  extraLabels?: Record<string, string>;
  ports?: k8s.V1ContainerPort[];
}

export interface RdmaPatch {
  env: Record<string, string>;
  capabilities: string[];
  resources: Record<string, string>;
  volumes: k8s.V1Volume[];
  mounts: k8s.V1VolumeMount[];
}

const str = (v: unknown): string | undefined =>
  v === undefined || v === null || v === '' ? undefined : String(v);
const bool = (v: unknown, d: boolean): boolean =>
  v === undefined || v === null ? d : v === true || v === 'true';

/** `cpu: 2` → '2', `memory: 8Gi` → '8Gi' */
const quantity = (v: unknown): string | undefined => str(v);

export function buildPod(
  c: ManifestContext,
  op: K8sOperatorConfig,
  p: PodPlan,
  warn: (m: string) => void,
): k8s.V1Pod {
  const s = c.settings;
  const parts: PodParts = { c, op, p };
  const hostNetwork = bool(op.host_network, s.hostNetwork);
  const { volumes, mounts, init } = podVolumes(parts);

  const { container, claims } = mainContainer(parts, mounts, warn);

  const pullSecrets = (
    Array.isArray(op.image_pull_secrets)
      ? op.image_pull_secrets
      : str(op.image_pull_secrets)
        ? [op.image_pull_secrets]
        : []
  ).map((n) => ({ name: String(n) }));
  const nodeSelector = {
    ...s.nodeSelector,
    ...Object.fromEntries(Object.entries(op.node_selector ?? {}).map(([k, v]) => [k, String(v)])),
    ...(p.node ? { 'kubernetes.io/hostname': p.node } : {}),
  };
  const { labels, annotations } = podMetadata(parts);
  let spec: k8s.V1PodSpec = {
    restartPolicy: str(op.restart) ?? 'Never',
    ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(s.tolerations.length ? { tolerations: s.tolerations } : {}),
    ...(hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
    ...(s.hostIpc ? { hostIPC: true } : {}),
    ...(str(op.service_account) ? { serviceAccountName: String(op.service_account) } : {}),
    ...(pullSecrets.length ? { imagePullSecrets: pullSecrets } : {}),
    ...(str(op.runtime_class) ? { runtimeClassName: String(op.runtime_class) } : {}),
    ...(str(op.priority_class) ? { priorityClassName: String(op.priority_class) } : {}),
    ...(op.termination_grace_period !== undefined && op.termination_grace_period !== null
      ? { terminationGracePeriodSeconds: Number(op.termination_grace_period) }
      : {}),
    ...(isObj(op.pod_security_context) ? { securityContext: op.pod_security_context } : {}),
    ...(init.length ? { initContainers: init } : {}),
    containers: [container],
    volumes,
    ...(claims.length ? { resourceClaims: claims } : {}),
  };
  if (isObj(op.pod_overrides)) {
    const { metadata: overMeta, spec: overSpec, ...rest } = op.pod_overrides;
    if (Object.keys(rest).length)
      warn(`pod_overrides: only metadata and spec are merged (ignored: ${Object.keys(rest).join(', ')})`);
    if (isObj(overSpec)) spec = deepMerge(spec, overSpec, 'pod_overrides.spec', warn);
    if (isObj(overMeta)) {
      const empty: k8s.V1ObjectMeta = { labels: {}, annotations: {} };
      const m = deepMerge(empty, overMeta, 'pod_overrides.metadata', warn);
      Object.assign(annotations, m.annotations);
      // sflow's own labels win: they are what every deletion selects on
      for (const [k, v] of Object.entries(m.labels ?? {})) if (!(k in labels)) labels[k] = String(v);
    }
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: c.namespace, labels, annotations },
    spec,
  };
}

/** the pod's `main` container (resources, env, security, ports) with `container_overrides` merged in */
function mainContainer(
  parts: PodParts,
  mounts: k8s.V1VolumeMount[],
  warn: (m: string) => void,
): { container: k8s.V1Container; claims: ReturnType<typeof podResources>['claims'] } {
  const { op, p } = parts;
  const { requests, limits, claims } = podResources(parts);

  const env = containerEnv(parts);

  const caps = p.rdma?.capabilities ?? [];
  let security: k8s.V1SecurityContext = {
    ...(bool(op.run_as_root, false) ? { runAsUser: 0, runAsGroup: 0 } : {}),
    ...(caps.length ? { capabilities: { add: caps } } : {}),
  };
  if (isObj(op.security_context))
    security = deepMerge(security, op.security_context, 'security_context', warn, false);

  let container: k8s.V1Container = {
    name: 'main',
    image: p.image,
    command: p.command,
    ...(str(op.image_pull_policy) ? { imagePullPolicy: String(op.image_pull_policy) } : {}),
    ...(str(op.working_dir) ? { workingDir: String(op.working_dir) } : {}),
    ...(env.size ? { env: [...env.values()] } : {}),
    ...(p.envSecret ? { envFrom: [{ secretRef: { name: p.envSecret } }] } : {}),
    ...(Object.keys(requests).length || Object.keys(limits).length || claims.length
      ? {
          resources: {
            ...(Object.keys(requests).length ? { requests } : {}),
            ...(Object.keys(limits).length ? { limits } : {}),
            // the container must name every pod claim it uses (GPUs, the compute-domain channel)
            ...(claims.length ? { claims: claims.map((c) => ({ name: c.name })) } : {}),
          },
        }
      : {}),
    volumeMounts: mounts,
    ...(Object.keys(security).length ? { securityContext: security } : {}),
    ...(Array.isArray(op.ports) || p.ports
      ? { ports: [...(p.ports ?? []), ...asWritten<k8s.V1ContainerPort>(op.ports ?? [])] }
      : {}),
    ...(isObj(op.lifecycle) ? { lifecycle: op.lifecycle } : {}),
    ...(bool(op.tty, false) && p.role === 'task' ? { tty: true, stdin: false } : {}),
  };
  if (isObj(op.container_overrides))
    container = deepMerge(container, op.container_overrides, 'container_overrides', warn);

  return { container, claims };
}

/** what each part of a pod is built from: the manifest context, the operator's settings, the pod */
interface PodParts {
  c: ManifestContext;
  op: K8sOperatorConfig;
  p: PodPlan;
}

/** the pod's volumes and the main container's mounts; init containers that make claims writable */
function podVolumes({ c, op, p }: PodParts): {
  volumes: k8s.V1Volume[];
  mounts: k8s.V1VolumeMount[];
  init: k8s.V1Container[];
} {
  const s = c.settings;
  const mounts: k8s.V1VolumeMount[] = [];
  const volumes: k8s.V1Volume[] = [];
  if (p.scriptConfigMap) {
    volumes.push({ name: 'sflow-run', configMap: { name: p.scriptConfigMap, defaultMode: 0o755 } });
    mounts.push({ name: 'sflow-run', mountPath: SCRIPT_DIR, readOnly: true });
  }
  if (p.artifacts && p.artifacts.files.length) {
    volumes.push({ name: 'sflow-artifacts', configMap: { name: p.artifacts.configMap } });
    for (const f of p.artifacts.files)
      mounts.push({ name: 'sflow-artifacts', mountPath: f.path, subPath: f.key, readOnly: true });
  }
  if (p.outputDir) {
    volumes.push({ name: 'sflow-output', emptyDir: {} });
    mounts.push({ name: 'sflow-output', mountPath: p.outputDir });
  }
  if (s.hostIpc) {
    volumes.push({ name: 'dshm', hostPath: { path: '/dev/shm', type: 'Directory' } });
  } else {
    const size = str(op.shm_size);
    volumes.push({ name: 'dshm', emptyDir: { medium: 'Memory', ...(size ? { sizeLimit: size } : {}) } });
  }
  mounts.push({ name: 'dshm', mountPath: '/dev/shm' });
  const init: k8s.V1Container[] = [];
  for (const v of s.volumes) {
    const vname = `vol-${v.name}`
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .slice(0, 63);
    volumes.push(
      v.claim
        ? { name: vname, persistentVolumeClaim: { claimName: v.claim, readOnly: v.readOnly } }
        : {
            name: vname,
            emptyDir: {
              ...(v.emptyDir?.medium ? { medium: v.emptyDir.medium } : {}),
              ...(v.emptyDir?.sizeLimit ? { sizeLimit: v.emptyDir.sizeLimit } : {}),
            },
          },
    );
    mounts.push({
      name: vname,
      mountPath: v.mountPath,
      ...(v.subPath ? { subPath: v.subPath } : {}),
      readOnly: v.readOnly,
    });
    if (v.ensureWritable && v.claim && !v.readOnly) {
      init.push({
        name: `ensure-${vname}`.slice(0, 63),
        image: s.reservation.image,
        command: ['sh', '-c', `mkdir -p "$0" && chmod 0777 "$0" || true`, v.mountPath],
        securityContext: { runAsUser: 0 },
        volumeMounts: [{ name: vname, mountPath: v.mountPath, ...(v.subPath ? { subPath: v.subPath } : {}) }],
      });
    }
  }
  if (p.rdma) {
    volumes.push(...p.rdma.volumes);
    mounts.push(...p.rdma.mounts);
  }
  volumes.push(...(p.extraVolumes ?? []));
  mounts.push(...(p.extraMounts ?? []));
  return { volumes, mounts, init };
}

/** the main container's requests and limits, and the pod's resource claims */
function podResources({ c, op, p }: PodParts): {
  requests: Record<string, string>;
  limits: Record<string, string>;
  claims: k8s.V1PodResourceClaim[];
} {
  const s = c.settings;
  // resources: GPUs (device plugin or DRA), cpu/memory
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (p.gpus > 0 && s.scheduling === 'device_plugin') limits[s.gpuResourceName] = String(p.gpus);
  const cpu = quantity(op.cpu) ?? (p.gpus > 0 ? num(s.cpuPerGpu, p.gpus) : num(s.cpuRequest, 1));
  if (cpu) requests.cpu = cpu;
  if (quantity(op.memory)) requests.memory = quantity(op.memory)!;
  if (quantity(op.cpu_limit)) limits.cpu = quantity(op.cpu_limit)!;
  if (quantity(op.memory_limit)) limits.memory = quantity(op.memory_limit)!;
  for (const [k, v] of Object.entries(p.rdma?.resources ?? {})) limits[k] = v;
  const claims: k8s.V1PodResourceClaim[] = [];
  if (p.claimTemplate) claims.push({ name: 'gpus', resourceClaimTemplateName: p.claimTemplate });
  if (p.channelTemplate) claims.push({ name: 'cd-channel', resourceClaimTemplateName: p.channelTemplate });
  return { requests, limits, claims };
}

/** the main container's environment, by name */
function containerEnv({ op, p }: PodParts): Map<string, k8s.V1EnvVar> {
  // environment: the task's Secret, per-pod values, the operator's raw EnvVar list (wins by name)
  const env = new Map<string, k8s.V1EnvVar>();
  for (const [k, v] of Object.entries(p.rdma?.env ?? {})) env.set(k, { name: k, value: v });
  for (const e of p.env) env.set(e.name, e);
  // the node the pod really runs on, from the API (downward API): it beats the plan's value
  if (RUNS_TASKS.has(p.role))
    env.set(NODE_NAME_ENV, { name: NODE_NAME_ENV, valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
  for (const e of op.env ?? []) env.set(e.name, e);
  return env;
}

/** the operator's labels and annotations under sflow's own */
function podMetadata({ c, op, p }: PodParts): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const labels = {
    ...Object.fromEntries(Object.entries(op.labels ?? {}).map(([k, v]) => [k, String(v)])),
    ...taskLabels(c.run, c.backend, p.role, p.task, p.attempt),
    [L_NODE]: String(p.nodeIndex),
    ...(p.extraLabels ?? {}),
  };
  const annotations = {
    ...Object.fromEntries(Object.entries(op.annotations ?? {}).map(([k, v]) => [k, String(v)])),
    [A_DRIVER]: c.driver,
    [A_RUN_ID]: c.run.runId,
  };
  return { labels, annotations };
}

function num(perUnit: number | null, units: number): string | undefined {
  if (perUnit === null || perUnit <= 0) return undefined;
  const v = perUnit * units;
  return Number.isInteger(v) ? String(v) : `${Math.round(v * 1000)}m`;
}
