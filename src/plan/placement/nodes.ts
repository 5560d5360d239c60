/**
 * Node selection (placement.md §3): the pool after `exclude`, then `indices` or a `count` slice, and
 * exclusive node reservations (`nodes.release_after`, §5.1).
 */
import type { PlacementRequest } from './types.js';
import type { BackendState } from './state.js';
import { placementError } from './errors.js';

/** allocation positions left after `exclude`, in allocation order */
export function resolvePool(req: PlacementRequest, state: BackendState): readonly number[] {
  const n = state.nodes.length;
  const all = state.allPositions;
  const exclude = req.nodes?.exclude;
  if (!exclude || exclude.length === 0) return all;
  const bad = exclude.filter((v) => !Number.isInteger(v) || v < -n || v >= n);
  if (bad.length > 0) {
    throw placementError(
      'NODE_EXCLUDE_RANGE',
      `Task '${req.task}' resources.nodes.exclude contains index(es) ${bad.join(', ')} out of range for ` +
        `${n} allocated node(s) of backend '${req.backend}' (valid: 0..${n - 1}, or -${n}..-1 counted from the end)`,
      undefined,
      { task: req.task, field: 'nodes.exclude' },
    );
  }
  const drop = new Set(exclude.map((v) => (v < 0 ? v + n : v)));
  const pool = all.filter((i) => !drop.has(i));
  if (pool.length === 0) {
    throw placementError(
      'NODE_EXCLUDE_EMPTY',
      `Task '${req.task}' resources.nodes.exclude removed all nodes from the pool of backend '${req.backend}' ` +
        `(${n} allocated node(s))`,
      undefined,
      { task: req.task, field: 'nodes.exclude' },
    );
  }
  return pool;
}

/**
 * Nodes chosen by `nodes.indices` / `nodes.count` (allocation positions, in assignment order), or null
 * when the task does not pin nodes. Throws on every §6 node error and on reservation conflicts.
 */
export function explicitNodes(
  req: PlacementRequest,
  t: number,
  pool: readonly number[],
  state: BackendState,
): number[] | null {
  const spec = req.nodes;
  if (!spec || (spec.indices === undefined && spec.count === undefined)) return null;
  if (spec.indices !== undefined && spec.count !== undefined) {
    throw placementError(
      'NODE_INDICES_AND_COUNT',
      `Task '${req.task}' resources.nodes cannot set both 'indices' and 'count'`,
      'keep one of them: indices pins exact nodes, count takes a slice of the pool',
      { task: req.task, field: 'nodes' },
    );
  }
  if (spec.indices !== undefined) return byIndices(req, t, spec.indices, pool, state);
  return byCount(req, t, spec.count as number, pool, state);
}

function byIndices(
  req: PlacementRequest,
  t: number,
  indices: number[],
  pool: readonly number[],
  state: BackendState,
): number[] {
  const n = pool.length;
  if (indices.length === 0) {
    throw placementError(
      'NODE_INDICES_EMPTY',
      `Task '${req.task}' resources.nodes.indices is empty`,
      undefined,
      { task: req.task, field: 'nodes.indices' },
    );
  }
  const chosen: number[] = [];
  for (const idx of indices) {
    if (!Number.isInteger(idx) || idx < -n || idx >= n) {
      throw placementError(
        'NODE_INDEX_RANGE',
        `Task '${req.task}' resources.nodes.indices contains out-of-range index ${idx}; the node pool of ` +
          `backend '${req.backend}' has ${n} node(s) after exclude (valid: 0..${n - 1}, or -${n}..-1)`,
        undefined,
        { task: req.task, field: 'nodes.indices' },
      );
    }
    const pos = pool[idx < 0 ? idx + n : idx];
    if (chosen.includes(pos)) {
      throw placementError(
        'NODE_INDEX_DUPLICATE',
        `Task '${req.task}' resources.nodes.indices names node '${state.nodes[pos].name}' twice (index ${idx})`,
        undefined,
        { task: req.task, field: 'nodes.indices' },
      );
    }
    chosen.push(pos);
  }
  for (const pos of chosen) {
    if (state.nodeBlocked(pos, t)) {
      const owner = state.nodeOwner[pos];
      throw placementError(
        'NODE_RESERVED',
        `Task '${req.task}' pins node '${state.nodes[pos].name}', but it is reserved by task ` +
          `'${state.life.requests[owner].task}': ${state.life.blockReason('nodes', owner, t)}`,
        'pin another node, or make the tasks depend on each other',
        { task: req.task },
      );
    }
  }
  return chosen;
}

function byCount(
  req: PlacementRequest,
  t: number,
  count: number,
  pool: readonly number[],
  state: BackendState,
): number[] {
  if (!Number.isInteger(count) || count <= 0) {
    throw placementError(
      'NODE_COUNT',
      `Task '${req.task}' resources.nodes.count must be an integer > 0, got ${count}`,
      undefined,
      { task: req.task, field: 'nodes.count' },
    );
  }
  const where = `(replica_index=${req.replicaIndex}, policy=${req.policy})`;
  const reserving = req.nodes?.releaseAfter !== undefined;
  if (reserving || pool.some((pos) => state.nodeBlocked(pos, t))) {
    const free = pool.filter((pos) => !state.nodeBlocked(pos, t));
    if (free.length >= count) return free.slice(0, count);
    const blockers = pool
      .filter((pos) => state.nodeBlocked(pos, t))
      .map(
        (pos) =>
          `node '${state.nodes[pos].name}': ${state.life.blockReason('nodes', state.nodeOwner[pos], t)}`,
      );
    throw placementError(
      'NODE_COUNT_UNAVAILABLE',
      `Task '${req.task}' needs ${count} node(s) ${where}, but only ${free.length} of the ${pool.length} node(s) ` +
        `in the pool of backend '${req.backend}' are not reserved:\n  ${blockers.join('\n  ')}`,
      undefined,
      { task: req.task },
    );
  }
  const start = req.policy === 'sequential' ? 0 : req.replicaIndex * count;
  if (start + count > pool.length) {
    throw placementError(
      'NODE_COUNT_OVERFLOW',
      `Task '${req.task}' needs ${count} node(s) ${where}: pool positions ${start}..${start + count - 1}, ` +
        `but the node pool of backend '${req.backend}' has only ${pool.length} node(s)`,
      'add nodes to the backend, lower resources.nodes.count, or use policy sequential',
      { task: req.task },
    );
  }
  return pool.slice(start, start + count);
}

/** every pool node (task without node pin); a task with a `nodes` block respects reservations */
export function wholePool(
  req: PlacementRequest,
  t: number,
  pool: readonly number[],
  state: BackendState,
): readonly number[] {
  if (req.nodes) {
    for (const pos of pool) {
      if (state.nodeBlocked(pos, t)) {
        const owner = state.nodeOwner[pos];
        throw placementError(
          'NODE_RESERVED',
          `Task '${req.task}' spans every pool node, but node '${state.nodes[pos].name}' is reserved by task ` +
            `'${state.life.requests[owner].task}': ${state.life.blockReason('nodes', owner, t)}`,
          'pin nodes with resources.nodes.indices or count, or exclude the reserved node',
          { task: req.task },
        );
      }
    }
  }
  return pool;
}
