/**
 * GPU requests the planner cannot pack: nodes of unknown capacity — offset slicing by replica index
 * with a warning (placement.md §4.4), or, for engines that assign devices themselves (Kubernetes
 * before the allocation reports each node's allocatable GPUs), the first pool node(s) sized by the
 * count alone. With a known capacity both are packed in plan.ts.
 */
import type { PlacementRequest } from './types.js';
import type { BackendState } from './state.js';
import type { GpuWant } from './gpu-request.js';
import { checkShareFits, perNodeShare } from './gpu-request.js';
import { placementError } from './errors.js';

export interface UncheckedChoice {
  nodes: readonly number[];
  gpus: number[] | null;
  perNode: number;
  warnings: string[];
}

/** pool nodes for a task that pins none: `need` nodes from the front of the pool */
function front(req: PlacementRequest, pool: readonly number[], need: number, what: string): number[] {
  if (need > pool.length) {
    throw placementError(
      'GPU_FANOUT_POOL',
      `Task '${req.task}' ${what} requires ${need} node(s) (replica_index=${req.replicaIndex}, ` +
        `policy=${req.policy}), but the pool of backend '${req.backend}' has only ${pool.length} node(s)`,
      undefined,
      { task: req.task },
    );
  }
  return pool.slice(0, need);
}

export function placeUnknownCapacity(
  req: PlacementRequest,
  want: GpuWant,
  pool: readonly number[],
  pinned: readonly number[] | null,
): UncheckedChoice {
  const warning =
    `Backend '${req.backend}' does not declare gpus_per_node, so the GPUs of task '${req.task}' were assigned ` +
    `by replica offset without packing or conflict checks; set gpus_per_node on the backend to enable them`;
  if (want.indices) {
    const L = want.indices.length;
    let nodes: readonly number[];
    if (pinned) {
      nodes = pinned;
      if (want.count !== undefined && want.count !== L * nodes.length) {
        throw placementError(
          'GPU_COUNT_MISMATCH',
          `Task '${req.task}' requests ${want.count} GPU(s) with ${L} indices on ${nodes.length} pinned node(s): ` +
            `count must equal len(indices) × nodes = ${L * nodes.length}. Use count ${L * nodes.length}.`,
          undefined,
          { task: req.task },
        );
      }
    } else {
      if (want.count !== undefined && want.count % L !== 0) {
        throw placementError(
          'GPU_FANOUT_MULTIPLE',
          `Task '${req.task}' requests ${want.count} GPU(s) with ${L} indices: count must be a positive multiple ` +
            `of len(indices) = ${L}. Use count ${Math.max(L, Math.round(want.count / L) * L)}.`,
          undefined,
          { task: req.task },
        );
      }
      nodes = front(req, pool, want.count !== undefined ? want.count / L : 1, `with ${want.count} GPU(s)`);
    }
    return { nodes, gpus: want.indices, perNode: L, warnings: [warning] };
  }
  const nodes = pinned ?? [pool[0]];
  const share = perNodeShare(req, want.count as number, nodes.length, Infinity);
  const start = req.replicaIndex * share;
  return {
    nodes,
    gpus: Array.from({ length: share }, (_, i) => start + i),
    perNode: share,
    warnings: [warning],
  };
}

export function placeEngineAssigned(
  req: PlacementRequest,
  want: GpuWant,
  st: BackendState,
  pool: readonly number[],
  pinned: readonly number[] | null,
): UncheckedChoice {
  const count = want.count as number;
  let nodes = pinned;
  if (!nodes) {
    const caps = pool.map((p) => st.cap(p)).filter((c): c is number => c !== null && c > 0);
    const maxCap = caps.length ? Math.max(...caps) : Infinity;
    const per = caps.length ? Math.min(...caps) : Infinity;
    if (count > maxCap && count % per !== 0) {
      throw placementError(
        'GPU_EXPAND_MULTIPLE',
        `Task '${req.task}' requests ${count} GPU(s), more than one node holds; automatic multi-node expansion ` +
          `requires gpus.count to be a multiple of the per-node GPU capacity (${per})`,
        'set resources.nodes.count explicitly',
        { task: req.task },
      );
    }
    nodes = front(req, pool, count > maxCap ? count / per : 1, `requesting ${count} GPU(s)`);
  }
  const known = nodes.map((p) => ({ name: st.nodes[p].name, cap: st.cap(p) }));
  const caps = known.filter((k): k is { name: string; cap: number } => k.cap !== null);
  const share = perNodeShare(
    req,
    count,
    nodes.length,
    caps.length ? Math.min(...caps.map((c) => c.cap)) : Infinity,
  );
  if (caps.length === known.length) checkShareFits(req, count, share, caps);
  return { nodes, gpus: null, perNode: share, warnings: [] };
}
