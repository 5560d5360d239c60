/** `type: kubernetes` backends (backends.md §5.1). */
import * as z from 'zod';
import {
  bool,
  boolOrExpr,
  fail,
  intOrExpr,
  numOrExpr,
  oneOf,
  scalarString,
  str,
  strOrInt,
} from './common.js';
import { list, record, strictObject, strList } from './shapes.js';

const VolumeSchema = strictObject('kubernetes volume', {
  name: str({ nonEmpty: true }),
  claim: str().optional(),
  empty_dir: strictObject('empty_dir', {
    medium: str().optional(),
    size_limit: strOrInt().optional(),
  })
    .nullable()
    .optional(),
  mount_path: str({ nonEmpty: true }),
  sub_path: str().optional(),
  read_only: boolOrExpr().optional(),
  ensure_writable: boolOrExpr().optional(),
}).superRefine((v, ctx) => {
  const hasClaim = v.claim != null;
  const hasEmpty = v.empty_dir !== undefined;
  if (hasClaim === hasEmpty)
    fail(ctx, [], `volume '${v.name}' needs exactly one source: 'claim' (a PVC) or 'empty_dir'`);
});

export const KubernetesBackendSchema = strictObject('kubernetes backend', {
  name: str(),
  type: z.literal('kubernetes'),
  default: bool().optional(),
  namespace: str(),
  nodes: intOrExpr({ min: 1 }),
  /** 0 = CPU-only */
  gpus_per_node: intOrExpr({ min: 0 }).nullable().optional(),
  scheduling: oneOf(['device_plugin', 'dra'], { allowExpr: true }).optional(),
  gpu_resource_name: str().optional(),
  host_network: boolOrExpr().optional(),
  host_ipc: boolOrExpr().optional(),
  volumes: list(VolumeSchema, 'volumes').optional(),
  collect_node_local_output: boolOrExpr().optional(),
  collect_grace_seconds: numOrExpr({ min: 0 }).optional(),
  collect_max_file_size: strOrInt().optional(),
  reservation: strictObject('reservation', {
    timeout: intOrExpr({ min: 0 }).optional(),
    handoff: oneOf(['auto', 'create_before_destroy', 'destroy_before_create'], {
      allowExpr: true,
    }).optional(),
    placeholder_image: str().optional(),
  }).optional(),
  probe_pod_image: str().optional(),
  node_selector: record(scalarString(), 'node_selector').optional(),
  tolerations: list(z.record(z.string(), z.unknown()), 'tolerations').optional(),
  include_nodes: strList('include_nodes').optional(),
  exclude_nodes: strList('exclude_nodes').optional(),
  dra: strictObject('dra', {
    gpu_device_class: str().optional(),
    device_selectors: strList('device_selectors').optional(),
    rdma_device_class: str().optional(),
    rdma_match_attribute: str().optional(),
    nvlink_domain_label_key: str().optional(),
  }).optional(),
  compute_domain: strictObject('compute_domain', {
    /** a channel name, `auto` or `disable` */
    channel: str().optional(),
    create: boolOrExpr().optional(),
  }).optional(),
  rdma: oneOf(['auto', 'disable', 'gke', 'shared_device_plugin', 'host_device'], {
    allowExpr: true,
  }).optional(),
  merge_colocated_gpu_pods: oneOf(['auto', 'on', 'off'], { allowExpr: true, allowBool: true }).optional(),
  nvlink_domain: oneOf(['auto', 'node', 'rack', 'disable'], { allowExpr: true }).optional(),
  cpu_per_gpu: numOrExpr({ min: 0 }).optional(),
  cpu_request: numOrExpr({ min: 0 }).optional(),
  gpu_product_label_key: str().optional(),
  gib_installer_namespace: str().optional(),
});

export type KubernetesBackend = z.output<typeof KubernetesBackendSchema>;
