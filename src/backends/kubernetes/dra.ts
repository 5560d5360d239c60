/**
 * Experimental parts of the pod model (backends.md §5.5), generated as manifests and checked in
 * tests; the emulator stores them but runs no DRA driver, RDMA plugin or IMEX domain.
 *
 *  - DRA (`scheduling: dra`): one ResourceClaimTemplate per pod requesting `count` devices of
 *    `dra.gpu_device_class` (optionally CEL `device_selectors`, per task `device_class` /
 *    `device_selectors`), with `dra.rdma_device_class` NICs co-allocated in the same claim under a
 *    `matchAttribute` constraint on `dra.rdma_match_attribute`;
 *  - RDMA modes: what a pod gets for `rdma:` and the HCAs found on a reserved node;
 *  - compute domains: the channel claim every GPU pod joins, the ComputeDomain sflow may create.
 */
import type * as k8s from '@kubernetes/client-node';
import type { RdmaPatch } from './pod-manifest.js';
import type { K8sSettings, RdmaMode } from './settings.js';
import type { K8sOperatorConfig } from './operator-config.js';

export function claimTemplate(
  s: K8sSettings,
  op: Pick<K8sOperatorConfig, 'device_class' | 'device_selectors'>,
  name: string,
  meta: k8s.V1ObjectMeta,
  gpus: number,
): k8s.V1ResourceClaimTemplate {
  const deviceClassName = op.device_class ? String(op.device_class) : s.dra.gpuDeviceClass;
  const selectors = (
    Array.isArray(op.device_selectors) ? op.device_selectors.map(String) : s.dra.deviceSelectors
  ).map((expression) => ({ cel: { expression } }));
  const requests: k8s.V1DeviceRequest[] = [
    {
      name: 'gpus',
      exactly: {
        deviceClassName,
        allocationMode: 'ExactCount',
        count: gpus,
        ...(selectors.length ? { selectors } : {}),
      },
    },
  ];
  const constraints: k8s.V1DeviceConstraint[] = [];
  if (s.dra.rdmaDeviceClass) {
    requests.push({
      name: 'nics',
      exactly: { deviceClassName: s.dra.rdmaDeviceClass, allocationMode: 'ExactCount', count: gpus },
    });
    constraints.push({ requests: ['gpus', 'nics'], matchAttribute: s.dra.rdmaMatchAttribute });
  }
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: { ...meta, name },
    spec: { spec: { devices: { requests, ...(constraints.length ? { constraints } : {}) } } },
  };
}

export interface RdmaFound {
  /** HCAs seen on a reserved node (/sys/class/infiniband) */
  hcas: string[];
  /** GKE's per-NIC resources (`networking.gke.io.networks/rdma-0`, …) in node allocatable */
  gkeNetworks: string[];
  /** a shared `rdma/*` device-plugin resource in node allocatable */
  sharedResource?: string;
}

/** What a GPU pod gets for the backend's `rdma:` mode and what allocation found. */
export function rdmaPatch(
  mode: RdmaMode,
  found: RdmaFound,
  hostNetwork: boolean,
  affinity: string,
): RdmaPatch {
  const patch: RdmaPatch = { env: {}, capabilities: [], resources: {}, volumes: [], mounts: [] };
  if (mode === 'disable') {
    patch.env = { NCCL_IB_DISABLE: '1', NCCL_IBEXT_DISABLE: '1', NCCL_NET_PLUGIN: 'none' };
    return patch;
  }
  const chain: RdmaMode[] = mode === 'auto' ? ['gke', 'shared_device_plugin', 'host_device'] : [mode];
  for (const m of chain) {
    if (m === 'gke' && found.gkeNetworks.length) {
      for (const r of found.gkeNetworks) patch.resources[r] = '1';
    } else if (m === 'shared_device_plugin' && found.sharedResource) {
      patch.resources[found.sharedResource] = '1';
    } else if (m === 'host_device' && found.hcas.length && hostNetwork) {
      patch.volumes.push({ name: 'infiniband', hostPath: { path: '/dev/infiniband' } });
      patch.mounts.push({ name: 'infiniband', mountPath: '/dev/infiniband' });
    } else continue;
    patch.capabilities.push('IPC_LOCK');
    if (affinity === 'auto') patch.env.UCX_MAX_RNDV_RAILS = '1';
    patch.env.SFLOW_RDMA_AFFINITY = affinity;
    patch.env.SFLOW_RDMA_MODE = m;
    break;
  }
  if (found.hcas.length) patch.env.SFLOW_RDMA_HCAS = found.hcas.join(',');
  return patch;
}

/** the compute-domain channel claim template a GPU pod joins, or undefined */
export function channelTemplate(
  s: K8sSettings,
  created: string | undefined,
  discovered: string | undefined,
): string | undefined {
  if (created) return `${created}-channel`;
  if (!s.computeDomain.channel) return undefined;
  return s.computeDomain.channel === 'auto' ? discovered : s.computeDomain.channel;
}

/** NVIDIA's ComputeDomain custom resource, the fields sflow writes */
export interface ComputeDomain {
  apiVersion: 'resource.nvidia.com/v1beta1';
  kind: 'ComputeDomain';
  metadata: k8s.V1ObjectMeta;
  spec: { numNodes: number; channel: { resourceClaimTemplate: { name: string } } };
}

/** the ComputeDomain `compute_domain.create: true` makes: `sflow-cd-<backend>-<alloc id>` */
export function computeDomain(name: string, meta: k8s.V1ObjectMeta, nodes: number): ComputeDomain {
  return {
    apiVersion: 'resource.nvidia.com/v1beta1',
    kind: 'ComputeDomain',
    metadata: { ...meta, name },
    spec: { numNodes: nodes, channel: { resourceClaimTemplate: { name: `${name}-channel` } } },
  };
}
