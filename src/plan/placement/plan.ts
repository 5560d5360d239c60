/**
 * The placement planner (placement.md §3–§6): pure and deterministic. Concrete tasks are planned
 * first-fit in declaration / replica-expansion order, moved only where a dependency is declared later
 * (a stable topological order), so a task always sees every upstream task's placement.
 */
import type { PlacementRequest, ReleaseAfter, TaskPlacement, Topology, TopologyNode } from './types.js';
import { buildAncestry } from './ancestry.js';
import { BackendState, Lifetimes } from './state.js';
import { explicitNodes, resolvePool, wholePool } from './nodes.js';
import { validateGpus } from './gpu-request.js';
import { placeByScan, placeOnPinned } from './gpus.js';
import { placeEngineAssigned, placeUnknownCapacity } from './gpu-unchecked.js';
import { placementError } from './errors.js';

/** GPU release policy after inference (§5.2) and the Kubernetes task_ready coercion */
export function effectiveGpuPolicy(req: PlacementRequest): { policy: ReleaseAfter | null; warning?: string } {
  if (!req.gpus) return { policy: null };
  const explicit = req.gpus.releaseAfter;
  if (explicit === 'task_ready' && !req.engine.gpuReleaseOnReady) {
    return {
      policy: 'task_completion',
      warning:
        `Task '${req.task}' sets gpus.release_after: task_ready, which ${req.engine.label} cannot honour (a running pod's ` +
        `GPUs cannot be shared); using task_completion`,
    };
  }
  if (explicit) return { policy: explicit };
  return { policy: req.hasReadiness ? 'workflow_completion' : 'task_completion' };
}

export function planPlacement<N extends TopologyNode>(
  requests: readonly PlacementRequest[],
  topology: Topology<N>,
): TaskPlacement<N>[] {
  const ancestry = buildAncestry(requests);
  const gpu = requests.map(effectiveGpuPolicy);
  const life = new Lifetimes(
    requests,
    ancestry,
    gpu.map((g) => g.policy),
    requests.map((r) => r.nodes?.releaseAfter ?? null),
  );
  const states = new Map<string, BackendState<N>>();
  const out = new Array<TaskPlacement<N>>(requests.length);
  for (const t of ancestry.order) {
    const req = requests[t];
    let st = states.get(req.backend);
    if (!st) {
      const nodes = Object.prototype.hasOwnProperty.call(topology, req.backend)
        ? topology[req.backend]
        : undefined;
      if (!nodes)
        throw placementError(
          'UNKNOWN_BACKEND',
          `Task '${req.task}' uses unknown backend '${req.backend}'`,
          undefined,
          { task: req.task },
        );
      if (nodes.length === 0) {
        throw placementError(
          'NO_NODES',
          `Task '${req.task}': backend '${req.backend}' has no nodes to place it on`,
          undefined,
          { task: req.task },
        );
      }
      st = new BackendState<N>(req.backend, nodes, life);
      states.set(req.backend, st);
    }
    const placed = placeOne(req, t, st);
    if (gpu[t].warning) placed.warnings.unshift(gpu[t].warning);
    out[t] = {
      task: req.task,
      backend: req.backend,
      nodes: placed.nodes.map((pos) => st.nodes[pos]),
      gpus: placed.gpus,
      ...(placed.slots ? { gpuSlots: placed.slots } : {}),
      gpusPerNode: placed.perNode,
      releaseAfter: { nodes: req.nodes?.releaseAfter ?? 'placement_only', gpus: gpu[t].policy },
      warnings: placed.warnings,
    };
  }
  return out;
}

interface Placed {
  nodes: readonly number[];
  gpus: number[] | null;
  /** the slots an engine-assigned request accounts for (Kubernetes) */
  slots?: number[];
  perNode: number | null;
  warnings: string[];
}

function placeOne(req: PlacementRequest, t: number, st: BackendState): Placed {
  const want = validateGpus(req);
  const pool = resolvePool(req, st);
  const pinned = explicitNodes(req, t, pool, st);
  let placed: Placed;
  if (!want) {
    placed = { nodes: pinned ?? wholePool(req, t, pool, st), gpus: null, perNode: null, warnings: [] };
  } else if (capacityUnknown(req, st, pinned ?? pool, pinned !== null)) {
    placed = req.engine.gpuIndices
      ? placeUnknownCapacity(req, want, pool, pinned)
      : placeEngineAssigned(req, want, st, pool, pinned);
  } else {
    // packed like Slurm; an engine that assigns devices itself (Kubernetes) gets the count per node,
    // the planned slots only account for its GPUs (no CUDA_VISIBLE_DEVICES from the plan)
    const choice = pinned ? placeOnPinned(req, t, want, st, pinned) : placeByScan(req, t, want, st, pool);
    for (const pos of choice.nodes) st.reserveGpus(pos, choice.gpus, t);
    placed = req.engine.gpuIndices
      ? { nodes: choice.nodes, gpus: choice.gpus, perNode: choice.gpus.length, warnings: [] }
      : { nodes: choice.nodes, gpus: null, slots: choice.gpus, perNode: choice.gpus.length, warnings: [] };
  }
  if (req.nodes?.releaseAfter) for (const pos of placed.nodes) st.nodeOwner[pos] = t;
  return placed;
}

/** true when GPU capacity is unknown for the nodes in question (§4.4); mixed pinned nodes are an error */
function capacityUnknown(
  req: PlacementRequest,
  st: BackendState,
  nodes: readonly number[],
  pinned: boolean,
): boolean {
  const unknown = nodes.filter((pos) => st.cap(pos) === null);
  if (unknown.length === 0) return false;
  if (unknown.length === nodes.length) return true;
  if (!pinned) return false;
  throw placementError(
    'GPU_CAPACITY_MIXED',
    `Task '${req.task}' requests GPUs on node(s) ${unknown.map((p) => `'${st.nodes[p].name}'`).join(', ')} of ` +
      `backend '${req.backend}', whose GPU capacity is unknown while the other pinned nodes declare one`,
    'set gpus_per_node on every host that runs GPU tasks',
    { task: req.task },
  );
}
