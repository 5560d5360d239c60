/**
 * The graph the visualisers draw: a flat, serializable view of the planned DAG. The lead converts the
 * Plan into this shape; everything under src/visualize/ reads only this.
 */

export interface DagNode {
  /** concrete task name */
  id: string;
  label: string;
  /** replica base name when replicated */
  group?: string;
  sequential?: boolean;
  /** planned GPUs per task, when any */
  gpus?: number;
}

export interface DagEdge {
  from: string;
  to: string;
  label: 'Ready' | 'Completed';
}

export interface DagView {
  workflow: string;
  /** declaration order */
  nodes: DagNode[];
  edges: DagEdge[];
}

/** Index-based adjacency built once in O(nodes + edges); shared by every renderer. */
export interface DagIndex {
  /** node id → index into view.nodes (first declaration wins on duplicates) */
  indexOf: Map<string, number>;
  /** edges whose both ends are known nodes (others are dropped) */
  edges: DagEdge[];
  /** per node: indices of its upstream nodes, paired with the edge label */
  upstream: Array<Array<{ from: number; label: DagEdge['label'] }>>;
  /** per node: number of known downstream edges */
  outDegree: number[];
  /** replica base name → member node indices in declaration order */
  groups: Map<string, number[]>;
}

export function indexDag(view: DagView): DagIndex {
  const indexOf = new Map<string, number>();
  view.nodes.forEach((n, i) => {
    if (!indexOf.has(n.id)) indexOf.set(n.id, i);
  });
  const upstream: DagIndex['upstream'] = view.nodes.map(() => []);
  const outDegree = new Array<number>(view.nodes.length).fill(0);
  const edges: DagEdge[] = [];
  for (const e of view.edges) {
    const from = indexOf.get(e.from);
    const to = indexOf.get(e.to);
    if (from === undefined || to === undefined) continue;
    edges.push(e);
    upstream[to].push({ from, label: e.label });
    outDegree[from]++;
  }
  const groups = new Map<string, number[]>();
  view.nodes.forEach((n, i) => {
    if (indexOf.get(n.id) !== i || n.group === undefined) return;
    const members = groups.get(n.group);
    if (members) members.push(i);
    else groups.set(n.group, [i]);
  });
  return { indexOf, edges, upstream, outDegree, groups };
}

/** The node label shown in every format: the task label plus ` gpus=<n>` when GPUs are planned. */
export function nodeText(n: DagNode): string {
  return n.gpus !== undefined && n.gpus > 0 ? `${n.label} gpus=${n.gpus}` : n.label;
}

/** An id for a synthetic node (`start`, `stop`) that does not collide with any task id. */
export function freeId(wanted: string, taken: ReadonlySet<string> | ReadonlyMap<string, unknown>): string {
  if (!taken.has(wanted)) return wanted;
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? `__${wanted}__` : `__${wanted}_${i}__`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Variables as `KEY = value` lines, one line each (newlines flattened, very long values shortened). */
export function variableLines(variables: Record<string, string> | undefined): string[] {
  if (!variables) return [];
  return Object.entries(variables).map(([k, v]) => {
    let text = String(v).replace(/\r?\n/g, '\\n');
    if (text.length > 200) text = `${text.slice(0, 199)}…`;
    return `${k} = ${text}`;
  });
}
