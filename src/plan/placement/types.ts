/**
 * Input and output of the placement planner (spec placement.md). Pure data: the planner reads
 * resolved resource requests (every expression already evaluated to an int / list of ints) and the
 * backends' ordered nodes, and returns one placement per concrete task.
 */
import type { BackendCapabilities, BackendType, ReleaseAfter } from '../types.js';

export type { BackendType, ReleaseAfter };

/**
 * The backend capabilities placement reads: `gpuIndices` false means the engine assigns the
 * physical devices (count only, e.g. Kubernetes); `gpuReleaseOnReady` false means a running
 * task's GPUs cannot be handed on at READY.
 */
export type PlacementTraits = Pick<BackendCapabilities, 'label' | 'gpuIndices' | 'gpuReleaseOnReady'>;

export interface TopologyNode {
  name: string;
  ip: string;
  /** allocation index (0-based position in the backend's node list) */
  index: number;
  /** GPU capacity of the node; null when unknown (no `gpus_per_node`) */
  numGpus: number | null;
}

export interface NodeRequest {
  /** pool positions (after `exclude`); negative values count from the end */
  indices?: number[];
  count?: number;
  /** allocation indices removed from the pool first; negative values count from the end */
  exclude?: number[];
  /** set → exclusive node reservation with that lifetime; unset → placement only */
  releaseAfter?: ReleaseAfter;
}

export interface GpuRequest {
  count?: number;
  indices?: number[];
  /** unset → inferred (§5.2) */
  releaseAfter?: ReleaseAfter;
}

export interface PlacementRequest {
  /** concrete task name (replica-expanded) */
  task: string;
  /** base task name (the declared task) */
  base: string;
  backend: string;
  /** what the task's backend can do with GPUs (from its capabilities) */
  engine: PlacementTraits;
  replicaIndex: number;
  policy: 'parallel' | 'sequential';
  nodes?: NodeRequest;
  gpus?: GpuRequest;
  /** the task has a readiness probe (a service) */
  hasReadiness: boolean;
  /**
   * concrete names of direct dependencies. Chaining of sequential replicas of one base is added by
   * the planner itself (passing those edges too is harmless).
   */
  dependsOn: string[];
}

export interface TaskPlacement<N extends TopologyNode = TopologyNode> {
  task: string;
  backend: string;
  /** assigned nodes, in assignment order (the same objects as in the topology) */
  nodes: N[];
  /**
   * per-node GPU indices in CUDA_VISIBLE_DEVICES order, identical on every node; null when no GPUs
   * were requested, and on Kubernetes (the device plugin chooses, see `gpusPerNode`)
   */
  gpus: number[] | null;
  /**
   * Kubernetes: the GPU slots the planner counted for the task on each of its nodes (packing and
   * over-subscription checks, the allocation map, a merged pod's member order); the device plugin
   * picks the physical devices. Absent elsewhere (`gpus` holds them) and when capacity is unknown.
   */
  gpuSlots?: number[];
  /** GPUs per assigned node (the device request size on Kubernetes); null without GPUs */
  gpusPerNode: number | null;
  releaseAfter: { nodes: ReleaseAfter | 'placement_only'; gpus: ReleaseAfter | null };
  /** non-fatal notes (capacity unknown, Kubernetes task_ready coercion) */
  warnings: string[];
}

export type Topology<N extends TopologyNode = TopologyNode> = Record<string, N[]>;
