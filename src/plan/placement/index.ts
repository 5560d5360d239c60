export type {
  BackendType,
  GpuRequest,
  NodeRequest,
  PlacementRequest,
  ReleaseAfter,
  TaskPlacement,
  Topology,
  TopologyNode,
} from './types.js';
export { planPlacement, effectiveGpuPolicy } from './plan.js';
export { allocationMap, renderAllocationMap } from './allocation-map.js';
export type { AllocationMapBackend, AllocationMapNode } from './allocation-map.js';
export { suggestCounts } from './gpu-request.js';
