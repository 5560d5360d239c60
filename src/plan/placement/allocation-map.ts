/**
 * The dry-run "Allocation map" (placement.md §8.2): per backend → node → GPU index → owning tasks.
 * With release-based reuse a GPU can list several owners; they appear in planning order joined by `/`.
 */
import type { TaskPlacement, Topology, TopologyNode } from './types.js';

export interface AllocationMapNode<N extends TopologyNode = TopologyNode> {
  node: N;
  /** one entry per GPU index 0..cap-1; null when the capacity is unknown or 0 */
  gpus: { index: number; owners: string[] }[] | null;
  /** every task placed on the node, in placement order */
  tasks: string[];
}

export interface AllocationMapBackend<N extends TopologyNode = TopologyNode> {
  backend: string;
  nodes: AllocationMapNode<N>[];
}

export function allocationMap<N extends TopologyNode>(
  placements: readonly TaskPlacement<N>[],
  topology: Topology<N>,
): AllocationMapBackend<N>[] {
  const out: AllocationMapBackend<N>[] = [];
  for (const [backend, nodes] of Object.entries(topology)) {
    const mine = placements.filter((p) => p.backend === backend);
    if (nodes.length === 0 || mine.length === 0) continue;
    const rows = nodes.map((node): AllocationMapNode<N> => ({
      node,
      gpus: node.numGpus ? Array.from({ length: node.numGpus }, (_, index) => ({ index, owners: [] })) : null,
      tasks: [],
    }));
    const byName = new Map(nodes.map((n, i) => [n.name, i]));
    for (const p of mine) {
      // a task with no assigned nodes is counted on every node
      const where = p.nodes.length > 0 ? p.nodes.map((n) => byName.get(n.name) ?? -1) : rows.map((_, i) => i);
      for (const i of where) {
        if (i < 0) continue;
        const row = rows[i];
        row.tasks.push(p.task);
        if (!p.gpus || !row.gpus) continue;
        for (const g of p.gpus) if (g < row.gpus.length) row.gpus[g].owners.push(p.task);
      }
    }
    out.push({ backend, nodes: rows });
  }
  return out;
}

const LABEL_MAX = 18;

function shorten(label: string): string {
  return label.length <= LABEL_MAX ? label : `${label.slice(0, LABEL_MAX - 3)}...`;
}

/** terminal text; empty array when no backend has both nodes and tasks */
export function renderAllocationMap(map: readonly AllocationMapBackend[]): string[] {
  if (map.length === 0) return [];
  const lines = ['Allocation map (finalized node/GPU assignment):'];
  for (const b of map) {
    lines.push(`  - backend '${b.backend}':`);
    for (const row of b.nodes) {
      lines.push(`    ├─ node ${row.node.name}`);
      if (row.gpus) {
        for (const g of row.gpus)
          lines.push(`    │   GPU ${g.index}: ${g.owners.length ? shorten(g.owners.join('/')) : '.'}`);
      } else {
        lines.push('    │   GPUs: n/a');
      }
      lines.push(`    │   Tasks: ${row.tasks.length ? row.tasks.join(', ') : '(none)'}`);
    }
  }
  return lines;
}
