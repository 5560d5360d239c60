/** Validation of `resources.gpus` and the divisibility rule's "a count that works" (placement.md §4.2–4.3). */
import type { PlacementRequest } from './types.js';
import { placementError } from './errors.js';

export interface GpuWant {
  count?: number;
  indices?: number[];
}

export function validateGpus(req: PlacementRequest): GpuWant | null {
  const g = req.gpus;
  if (!g) return null;
  if (g.count === undefined && g.indices === undefined) {
    throw placementError(
      'GPU_EMPTY',
      `Task '${req.task}' resources.gpus needs 'count' or 'indices'`,
      'write e.g. gpus: {count: 1}',
      { task: req.task, field: 'gpus' },
    );
  }
  if (g.count !== undefined && (!Number.isInteger(g.count) || g.count <= 0)) {
    throw placementError(
      'GPU_COUNT',
      `Task '${req.task}' resources.gpus.count must be an integer > 0, got ${g.count}`,
      undefined,
      { task: req.task, field: 'gpus.count' },
    );
  }
  if (g.indices !== undefined) {
    if (!req.engine.gpuIndices) {
      throw placementError(
        'GPU_INDICES_KUBERNETES',
        `Task '${req.task}' sets resources.gpus.indices, which is not supported on the ${req.engine.label} backend ` +
          `'${req.backend}': the device plugin or DRA assigns the physical devices`,
        'use resources.gpus.count to size the device request',
        { task: req.task, field: 'gpus.indices' },
      );
    }
    if (g.indices.length === 0) {
      throw placementError(
        'GPU_INDICES_EMPTY',
        `Task '${req.task}' resources.gpus.indices is empty`,
        undefined,
        { task: req.task, field: 'gpus.indices' },
      );
    }
    const bad = g.indices.filter((v) => !Number.isInteger(v) || v < 0);
    if (bad.length > 0) {
      throw placementError(
        'GPU_INDICES_NEGATIVE',
        `Task '${req.task}' resources.gpus.indices must be non-negative integers, got ${bad.join(', ')}`,
        'unlike resources.nodes.indices, GPU indices cannot count from the end',
        { task: req.task, field: 'gpus.indices' },
      );
    }
    const dups = g.indices.filter((v, i) => g.indices!.indexOf(v) !== i);
    if (dups.length > 0) {
      throw placementError(
        'GPU_INDICES_DUPLICATE',
        `Task '${req.task}' resources.gpus.indices lists ${[...new Set(dups)].join(', ')} more than once`,
        undefined,
        { task: req.task, field: 'gpus.indices' },
      );
    }
  }
  return { count: g.count, indices: g.indices };
}

/** counts near `count` that split evenly over `nodes` nodes with at most `maxPerNode` each */
export function suggestCounts(count: number, nodes: number, maxPerNode: number): number[] {
  const lower = Math.floor(count / nodes) * nodes;
  const upper = Math.ceil(count / nodes) * nodes;
  const fits = (v: number): boolean => v > 0 && v / nodes <= maxPerNode;
  const out = [...new Set([lower, upper])].filter((v) => v !== count && fits(v));
  if (out.length === 0 && maxPerNode >= 1 && Number.isFinite(maxPerNode)) out.push(nodes * maxPerNode);
  return out;
}

function suggestionText(counts: number[]): string {
  return counts.length === 0 ? '' : ` Use count ${counts.join(' or ')}.`;
}

/** throws unless `count` splits evenly over `nodes` (v0.3.1 rule); returns the per-node share */
export function perNodeShare(
  req: PlacementRequest,
  count: number,
  nodes: number,
  maxPerNode: number,
): number {
  if (count % nodes !== 0) {
    throw placementError(
      'GPU_COUNT_NOT_DIVISIBLE',
      `Task '${req.task}' requests ${count} GPU(s) across ${nodes} node(s): resources.gpus.count must be a ` +
        `multiple of the task's node count (${nodes}).${suggestionText(suggestCounts(count, nodes, maxPerNode))}`,
      "gpus.count is the total over all of the task's nodes; multiply the per-node number by the node count",
      { task: req.task, field: 'gpus.count' },
    );
  }
  return count / nodes;
}

/** throws when the per-node share does not fit a node (e.g. count 10 over capacities 8 and 2) */
export function checkShareFits(
  req: PlacementRequest,
  count: number,
  share: number,
  nodes: { name: string; cap: number }[],
  backendSummary?: string,
): void {
  const total = nodes.reduce((a, n) => a + n.cap, 0);
  const small = nodes.find((n) => n.cap < share);
  if (!small) return;
  const minCap = Math.min(...nodes.map((n) => n.cap));
  const suggestion = suggestionText(minCap > 0 ? [nodes.length * minCap] : []);
  if (count > total) {
    throw placementError(
      'GPU_TOTAL_EXCEEDS',
      `Task '${req.task}' requests ${count} GPU(s) in total, but its ${nodes.length} assigned node(s) have only ` +
        `${total} GPU(s) in total (${nodes.map((n) => `${n.name}: ${n.cap}`).join(', ')}).${suggestion}` +
        `${backendSummary ? `\n  ${backendSummary}` : ''}`,
      undefined,
      { task: req.task },
    );
  }
  throw placementError(
    'GPU_SHARE_EXCEEDS',
    `Task '${req.task}' requests ${count} GPU(s) over ${nodes.length} node(s), i.e. ${share} per node, but node ` +
      `'${small.name}' has capacity ${small.cap}.${suggestion}`,
    'every node of a task gets the same number of GPUs',
    { task: req.task },
  );
}
