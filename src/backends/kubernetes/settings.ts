/**
 * A `type: kubernetes` backend entry (backends.md §5.1) after expression resolution, with the
 * defaults filled in, plus what the command line adds (`--kube-namespace`, `--kube-skip-pvc`).
 */
import type * as k8s from '@kubernetes/client-node';
import { SflowError } from '../../util/sflow-error.js';
import type { PlannedBackend } from '../../plan/types.js';

export interface VolumeSetting {
  name: string;
  claim?: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  mountPath: string;
  subPath?: string;
  readOnly: boolean;
  ensureWritable: boolean;
}

export type Handoff = 'auto' | 'create_before_destroy' | 'destroy_before_create';
export type RdmaMode = 'auto' | 'disable' | 'gke' | 'shared_device_plugin' | 'host_device';

export interface K8sSettings {
  name: string;
  namespace: string;
  nodes: number;
  /** null: derived from the nodes' allocatable at allocation */
  gpusPerNode: number | null;
  scheduling: 'device_plugin' | 'dra';
  gpuResourceName: string;
  hostNetwork: boolean;
  hostIpc: boolean;
  volumes: VolumeSetting[];
  collect: boolean;
  collectGraceS: number;
  /** bytes; 0 = no cap */
  collectMaxBytes: number;
  reservation: { timeoutS: number; handoff: Handoff; image: string };
  probePodImage: string;
  nodeSelector: Record<string, string>;
  /** as the recipe writes them (any toleration fields): the API server validates them */
  tolerations: k8s.V1Toleration[];
  includeNodes: string[];
  excludeNodes: string[];
  dra: {
    gpuDeviceClass: string;
    deviceSelectors: string[];
    rdmaDeviceClass?: string;
    rdmaMatchAttribute: string;
    nvlinkDomainLabelKey?: string;
  };
  computeDomain: { channel: string | null; create: boolean };
  rdma: RdmaMode;
  merge: boolean;
  cpuPerGpu: number | null;
  cpuRequest: number | null;
}

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** `10Mi`, `50M`, `1048576`, 0 → bytes */
export function parseSize(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.floor(v);
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?|k)?[bB]?\s*$/.exec(String(v));
  if (!m) {
    throw new SflowError('k8s.size', `${what} must be a byte count or a size like 50Mi, got '${String(v)}'`, {
      phase: 'plan',
    });
  }
  return Math.floor(Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1));
}

const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));
const bool = (v: unknown, dflt: boolean): boolean =>
  v === undefined || v === null ? dflt : v === true || v === 'true' || v === 'on';
const num = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** the command line's Kubernetes options (`--kube-namespace`, `--kube-skip-pvc`), as commander hands them */
export interface K8sCliOptions {
  kubeNamespace?: unknown;
  kubeSkipPvc?: unknown;
}

export function k8sSettings(
  b: Pick<PlannedBackend<'kubernetes'>, 'name' | 'config' | 'nodes'>,
  options: K8sCliOptions = {},
): K8sSettings {
  const c = b.config;
  const res = c.reservation ?? {};
  const dra = c.dra ?? {};
  const cd = c.compute_domain ?? {};
  const merge = c.merge_colocated_gpu_pods;
  const channel = str(cd.channel);
  const skipPvc = options.kubeSkipPvc === true;
  const volumes = (c.volumes ?? [])
    .map((v): VolumeSetting => ({
      name: String(v.name),
      ...(v.claim ? { claim: String(v.claim) } : {}),
      ...(v.empty_dir !== undefined
        ? {
            emptyDir: {
              ...(str(v.empty_dir?.medium) ? { medium: String(v.empty_dir?.medium) } : {}),
              ...(str(v.empty_dir?.size_limit) ? { sizeLimit: String(v.empty_dir?.size_limit) } : {}),
            },
          }
        : {}),
      mountPath: String(v.mount_path),
      ...(v.sub_path ? { subPath: String(v.sub_path) } : {}),
      // a PVC is read-only unless said otherwise (sharing one claim across nodes); scratch is writable
      readOnly: bool(v.read_only, Boolean(v.claim)),
      ensureWritable: bool(v.ensure_writable, false),
    }))
    .filter((v) => !(skipPvc && v.claim));
  const declared = num(c.gpus_per_node);
  return {
    name: b.name,
    namespace: str(options.kubeNamespace) ?? String(c.namespace ?? 'default'),
    nodes: Math.max(1, num(c.nodes) ?? (b.nodes.length || 1)),
    gpusPerNode: declared,
    scheduling: c.scheduling === 'dra' ? 'dra' : 'device_plugin',
    gpuResourceName: str(c.gpu_resource_name) ?? 'nvidia.com/gpu',
    hostNetwork: bool(c.host_network, true),
    hostIpc: bool(c.host_ipc, false),
    volumes,
    collect: bool(c.collect_node_local_output, true),
    collectGraceS: num(c.collect_grace_seconds) ?? 120,
    collectMaxBytes:
      c.collect_max_file_size === undefined
        ? 10 * 1024 ** 2
        : parseSize(c.collect_max_file_size, 'collect_max_file_size'),
    reservation: {
      timeoutS: num(res.timeout) ?? 600,
      handoff: (str(res.handoff) as Handoff | undefined) ?? 'auto',
      image: str(res.placeholder_image) ?? 'bash:5',
    },
    probePodImage: str(c.probe_pod_image) ?? 'curlimages/curl:latest',
    nodeSelector: Object.fromEntries(Object.entries(c.node_selector ?? {}).map(([k, v]) => [k, String(v)])),
    tolerations: c.tolerations ?? [],
    includeNodes: strList(c.include_nodes),
    excludeNodes: strList(c.exclude_nodes),
    dra: {
      gpuDeviceClass: str(dra.gpu_device_class) ?? 'gpu.nvidia.com',
      deviceSelectors: strList(dra.device_selectors),
      ...(str(dra.rdma_device_class) ? { rdmaDeviceClass: String(dra.rdma_device_class) } : {}),
      rdmaMatchAttribute: str(dra.rdma_match_attribute) ?? 'resource.kubernetes.io/pcieRoot',
      ...(str(dra.nvlink_domain_label_key)
        ? { nvlinkDomainLabelKey: String(dra.nvlink_domain_label_key) }
        : {}),
    },
    computeDomain: {
      channel: channel === undefined || channel === '' || channel === 'disable' ? null : channel,
      create: bool(cd.create, false),
    },
    rdma: (str(c.rdma) as RdmaMode | undefined) ?? 'auto',
    merge: !(merge === false || merge === 'off'),
    cpuPerGpu: num(c.cpu_per_gpu),
    cpuRequest: num(c.cpu_request),
  };
}
