/**
 * GPU selection on nodes of known capacity (placement.md §4.1): pinned nodes, single-node `count`
 * (first node with a contiguous idle run), auto-expansion over whole nodes, `indices` back-fill and
 * `count` + `indices` fan-out.
 */
import type { PlacementRequest } from './types.js';
import type { BackendState } from './state.js';
import type { GpuWant } from './gpu-request.js';
import { checkShareFits, perNodeShare } from './gpu-request.js';
import { list, placementError } from './errors.js';

export interface GpuChoice {
  nodes: readonly number[];
  gpus: number[];
}

const HINT_CAPACITY =
  'add nodes to the backend or reduce concurrent GPU requests; a task may reuse the GPUs of an upstream task ' +
  'that releases them (resources.gpus.release_after)';
const MAX_NODE_LINES = 8;

const seq = (start: number, n: number): number[] => Array.from({ length: n }, (_, i) => start + i);

/** GPUs on nodes pinned by `resources.nodes` */
export function placeOnPinned(
  req: PlacementRequest,
  t: number,
  want: GpuWant,
  st: BackendState,
  sel: readonly number[],
): GpuChoice {
  const N = sel.length;
  const infos = sel.map((pos) => ({ name: st.nodes[pos].name, cap: st.cap(pos) as number }));
  const minCap = Math.min(...infos.map((i) => i.cap));
  if (want.indices) {
    const L = want.indices.length;
    if (want.count !== undefined && want.count !== L * N) {
      throw placementError(
        'GPU_COUNT_MISMATCH',
        `Task '${req.task}' requests ${want.count} GPU(s) with indices [${list(want.indices)}] on ${N} pinned ` +
          `node(s): count must equal len(indices) × nodes = ${L * N}. Use count ${L * N}.`,
        undefined,
        { task: req.task },
      );
    }
    for (const pos of sel) checkIndicesFit(req, want.indices, st, pos);
    for (const pos of sel) {
      if (!st.allIdle(pos, want.indices, t)) {
        throw placementError(
          'GPU_CONFLICT',
          `Task '${req.task}' requests GPU(s) ${list(want.indices)} on node '${st.nodes[pos].name}', but they are ` +
            `not free:\n  ${st.describeBlockers(pos, t, want.indices).join('\n  ')}\n  ${st.summary(t)}`,
          HINT_CAPACITY,
          { task: req.task },
        );
      }
    }
    return { nodes: sel, gpus: want.indices };
  }
  const count = want.count as number;
  const share = perNodeShare(req, count, N, minCap);
  checkShareFits(req, count, share, infos, st.summary(t));
  for (let s = 0; s + share <= minCap; s++) {
    if (sel.every((pos) => st.firstRun(pos, share, t, s) === s)) return { nodes: sel, gpus: seq(s, share) };
  }
  const starts = sel.map((pos) => st.firstRun(pos, share, t));
  const full = starts.indexOf(-1);
  if (full >= 0) throw doesNotFit(req, t, st, sel[full], count, share);
  throw placementError(
    'GPU_NODE_STATES',
    `Task '${req.task}' needs the same ${share} GPU index(es) idle on each of its ${N} node(s), but the nodes are ` +
      `in different occupancy states (first idle run of ${share}: ` +
      `${sel.map((pos, i) => `${st.nodes[pos].name} at ${starts[i]}`).join(', ')})`,
    'pin nodes whose free GPUs line up (resources.nodes.indices), or change the order of the GPU tasks',
    { task: req.task },
  );
}

/** GPUs when the task does not pin nodes: the node follows from where the GPUs fit */
export function placeByScan(
  req: PlacementRequest,
  t: number,
  want: GpuWant,
  st: BackendState,
  pool: readonly number[],
): GpuChoice {
  const known = st.gpuNodes(pool);
  let maxCap = 0;
  for (const pos of known) maxCap = Math.max(maxCap, st.cap(pos) as number);
  if (want.indices) return scanIndices(req, t, want, want.indices, st, pool, known, maxCap);
  const count = want.count as number;
  if (count <= maxCap) {
    for (const pos of known) {
      if ((st.cap(pos) as number) < count || st.nodeBlocked(pos, t)) continue;
      const s = st.firstRun(pos, count, t);
      if (s >= 0) return { nodes: [pos], gpus: seq(s, count) };
    }
    throw noNodeFits(req, t, st, pool, count);
  }
  return expand(req, t, count, st, pool, known);
}

function scanIndices(
  req: PlacementRequest,
  t: number,
  want: GpuWant,
  indices: number[],
  st: BackendState,
  pool: readonly number[],
  known: readonly number[],
  maxCap: number,
): GpuChoice {
  const L = indices.length;
  const tooBig = indices.filter((g) => g >= maxCap);
  if (tooBig.length > 0) {
    throw placementError(
      'GPU_INDEX_CAPACITY',
      `Task '${req.task}' resources.gpus.indices ${list(tooBig)} exceed the GPU capacity of backend ` +
        `'${req.backend}' (largest node has ${maxCap} GPU(s), valid indices 0..${maxCap - 1})`,
      undefined,
      { task: req.task, field: 'gpus.indices' },
    );
  }
  if (want.count !== undefined && want.count % L !== 0) {
    throw placementError(
      'GPU_FANOUT_MULTIPLE',
      `Task '${req.task}' requests ${want.count} GPU(s) with indices [${list(indices)}]: count must be a positive ` +
        `multiple of len(indices) = ${L}. Use count ${Math.max(L, Math.round(want.count / L) * L)}.`,
      undefined,
      { task: req.task },
    );
  }
  const need = want.count !== undefined ? want.count / L : 1;
  const where = `(replica_index=${req.replicaIndex}, policy=${req.policy})`;
  if (need > known.length) {
    throw placementError(
      'GPU_FANOUT_POOL',
      `Task '${req.task}' requests ${want.count} GPU(s) as ${L} per node on ${need} node(s) ${where}, but the pool ` +
        `of backend '${req.backend}' has only ${known.length} GPU node(s)`,
      undefined,
      { task: req.task },
    );
  }
  const maxIdx = Math.max(...indices);
  const chosen: number[] = [];
  for (const pos of known) {
    if ((st.cap(pos) as number) <= maxIdx || st.nodeBlocked(pos, t)) continue;
    if (st.allIdle(pos, indices, t)) chosen.push(pos);
    if (chosen.length === need) return { nodes: chosen, gpus: indices };
  }
  const blockers = known.flatMap((pos) =>
    st.describeBlockers(
      pos,
      t,
      indices.filter((g) => g < (st.cap(pos) ?? 0)),
    ),
  );
  throw placementError(
    'GPU_INDICES_UNAVAILABLE',
    `Task '${req.task}' needs ${need} node(s) with GPU(s) ${list(indices)} idle, found ${chosen.length}` +
      `${chosen.length ? ` (${chosen.map((p) => st.nodes[p].name).join(', ')})` : ''}; nodes scanned: ` +
      `${pool.map((p) => st.nodes[p].name).join(', ')}\n  ${[...blockers.slice(0, MAX_NODE_LINES * 2), st.summary(t)].join('\n  ')}`,
    HINT_CAPACITY,
    { task: req.task },
  );
}

function expand(
  req: PlacementRequest,
  t: number,
  count: number,
  st: BackendState,
  pool: readonly number[],
  known: readonly number[],
): GpuChoice {
  const per = known.length > 0 ? Math.min(...known.map((pos) => st.cap(pos) as number)) : 0;
  if (per === 0 || count % per !== 0) {
    throw placementError(
      'GPU_EXPAND_MULTIPLE',
      `Task '${req.task}' requests ${count} GPU(s), more than one node holds; automatic multi-node expansion ` +
        `requires gpus.count to be a multiple of the per-node GPU capacity (${per})` +
        `${per > 0 ? `. Use count ${Math.max(per, Math.floor(count / per) * per)} or ${Math.ceil(count / per) * per}.` : ''}`,
      'set resources.nodes.count (or indices) explicitly to choose the nodes',
      { task: req.task },
    );
  }
  const need = count / per;
  if (need > known.length) {
    throw placementError(
      'GPU_EXPAND_POOL',
      `Task '${req.task}' requests ${count} GPU(s) which requires ${need} node(s) of ${per} GPU(s) ` +
        `(replica_index=${req.replicaIndex}, policy=${req.policy}), but the pool of backend '${req.backend}' ` +
        `has only ${known.length} GPU node(s)`,
      'add nodes to the backend or lower gpus.count',
      { task: req.task },
    );
  }
  const byStart = new Map<number, number[]>();
  for (const pos of known) {
    if (st.nodeBlocked(pos, t)) continue;
    const s = st.firstRun(pos, per, t);
    if (s < 0) continue;
    byStart.set(s, [...(byStart.get(s) ?? []), pos]);
  }
  for (const s of [...byStart.keys()].sort((a, b) => a - b)) {
    const nodes = byStart.get(s) as number[];
    if (nodes.length >= need) return { nodes: nodes.slice(0, need), gpus: seq(s, per) };
  }
  const candidates = [...byStart.values()].reduce((a, v) => a + v.length, 0);
  if (candidates >= need) {
    throw placementError(
      'GPU_NODE_STATES',
      `Task '${req.task}' needs ${need} node(s) with the same ${per} GPU index(es) idle, but the candidate nodes ` +
        `are in different occupancy states (${[...byStart]
          .map(([s, ps]) => `${ps.map((p) => st.nodes[p].name).join(', ')} free from GPU ${s}`)
          .join('; ')})`,
      'pin nodes explicitly with resources.nodes.indices',
      { task: req.task },
    );
  }
  throw noNodeFits(req, t, st, pool, count, `${need} node(s) with ${per} idle GPU(s) each`);
}

function checkIndicesFit(req: PlacementRequest, indices: number[], st: BackendState, pos: number): void {
  const cap = st.cap(pos) as number;
  const bad = indices.filter((g) => g >= cap);
  if (bad.length > 0) {
    throw placementError(
      'GPU_INDEX_CAPACITY',
      `Task '${req.task}' resources.gpus.indices ${list(bad)} do not exist on node '${st.nodes[pos].name}' ` +
        `(capacity ${cap}, valid indices 0..${cap - 1})`,
      undefined,
      { task: req.task, field: 'gpus.indices' },
    );
  }
}

function nodeLine(st: BackendState, pos: number, t: number): string {
  const cap = st.cap(pos) ?? 0;
  const used = st.blocked(pos, t).length;
  return `node '${st.nodes[pos].name}': ${cap - used} of ${cap} GPU(s) remaining (already allocated ${used})`;
}

function doesNotFit(
  req: PlacementRequest,
  t: number,
  st: BackendState,
  pos: number,
  count: number,
  share: number,
) {
  const cap = st.cap(pos) ?? 0;
  const used = st.blocked(pos, t).length;
  const remaining = cap - used;
  const what = share === count ? `${count} GPU(s)` : `${count} GPU(s) (${share} per node)`;
  const short =
    remaining >= share
      ? `${remaining} GPU(s) remain available there but not as a contiguous run of ${share}`
      : `only ${remaining} GPU(s) remain available there (still needed ${share - remaining})`;
  return placementError(
    'GPU_NO_FIT',
    `Task '${req.task}' requests ${what} on node '${st.nodes[pos].name}', but ${short}; node capacity ${cap}, ` +
      `already allocated ${used}.\n  ${[...st.describeBlockers(pos, t), st.summary(t)].join('\n  ')}`,
    HINT_CAPACITY,
    { task: req.task },
  );
}

function noNodeFits(
  req: PlacementRequest,
  t: number,
  st: BackendState,
  pool: readonly number[],
  count: number,
  shape?: string,
) {
  if (pool.length === 1 && !shape) return doesNotFit(req, t, st, pool[0], count, count);
  const lines = pool
    .slice(0, MAX_NODE_LINES)
    .flatMap((pos) => [nodeLine(st, pos, t), ...st.describeBlockers(pos, t)]);
  if (pool.length > MAX_NODE_LINES) lines.push(`… and ${pool.length - MAX_NODE_LINES} more node(s)`);
  return placementError(
    'GPU_NO_FIT',
    `Task '${req.task}' requests ${count} GPU(s), but no node of backend '${req.backend}' has ` +
      `${shape ?? `${count} contiguous idle GPU(s)`}.\n  ${[...lines, st.summary(t)].join('\n  ')}`,
    HINT_CAPACITY,
    { task: req.task },
  );
}
