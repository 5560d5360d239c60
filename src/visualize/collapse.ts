/**
 * Collapse large replica groups into one node each, so that image exports of workflows with
 * thousands of replicas stay small enough to lay out (Graphviz's `dot` is superlinear in width).
 */
import { type DagEdge, type DagNode, type DagView, freeId, indexDag } from './dag-view.js';

/**
 * A view in which every replica group of more than `over` members is one node
 * `base[0..N-1]` (label `base[0..N-1] ×N`), still in the group. Edges to or from any member are
 * redirected to it, deduplicated (Ready wins), and edges inside the group disappear. O(nodes + edges).
 */
export function collapseReplicaGroups(view: DagView, over: number): DagView {
  const idx = indexDag(view);
  const taken = new Set(idx.indexOf.keys());
  const target = new Map<string, string>();
  const nodes: DagNode[] = [];
  const done = new Set<string>();
  view.nodes.forEach((n, i) => {
    if (idx.indexOf.get(n.id) !== i) return;
    const members = n.group !== undefined ? idx.groups.get(n.group)! : undefined;
    if (!members || members.length <= over) {
      nodes.push(n);
      return;
    }
    if (done.has(n.group!)) return;
    done.add(n.group!);
    const name = freeId(`${n.group}[0..${members.length - 1}]`, taken);
    taken.add(name);
    for (const m of members) target.set(view.nodes[m].id, name);
    const gpus = new Set(members.map((m) => view.nodes[m].gpus ?? 0));
    let label = `${name} ×${members.length}`;
    if (gpus.size > 1) label += ` gpus=${Math.min(...gpus)}..${Math.max(...gpus)}`;
    nodes.push({
      id: name,
      label,
      group: n.group,
      sequential: members.some((m) => view.nodes[m].sequential),
      gpus: gpus.size === 1 && (n.gpus ?? 0) > 0 ? n.gpus : undefined,
    });
  });
  if (target.size === 0) return view;
  const edges = new Map<string, DagEdge>();
  for (const e of idx.edges) {
    const from = target.get(e.from) ?? e.from;
    const to = target.get(e.to) ?? e.to;
    if (from === to) continue;
    const key = `${from}\u0000${to}`;
    const seen = edges.get(key);
    if (!seen) edges.set(key, { from, to, label: e.label });
    else if (e.label === 'Ready') seen.label = 'Ready';
  }
  return { workflow: view.workflow, nodes, edges: [...edges.values()] };
}
