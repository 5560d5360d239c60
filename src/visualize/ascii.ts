/**
 * Text drawing of the DAG for `--dry-run` (runtime.md §8.8 item 9): tasks layered by topological
 * depth (longest path from a task without dependencies), one line per task with its dependencies.
 * Replica groups may be collapsed into `base[0..N-1]`. Linear in nodes + edges; output capped.
 *
 *   DAG demo: 5 tasks, 4 edges, 3 layers
 *   Layer 0
 *   └─ server gpus=2
 *   Layer 1
 *   ├─ client[0..1]  ×2 sequential  ← server (ready)
 *   └─ warmup                      ← server (ready)
 *   Layer 2
 *   └─ report                      ← client[0..1], warmup
 */
import { type DagView, indexDag, nodeText } from './dag-view.js';

export interface AsciiOptions {
  /** lines after the header before the drawing is cut with `… (+N more lines)`; default 200 */
  maxLines?: number;
  /** `auto` (default): collapse groups of more than 4 replicas, or every group when the view has over 200 tasks */
  collapse?: 'auto' | 'always' | 'never';
}

const MAX_DEPS_SHOWN = 4;
const MAX_PAD = 40;

interface Unit {
  /** how dependants refer to it: task label or `base[0..N-1]` */
  name: string;
  /** name plus annotations (gpus, replica count) */
  text: string;
  depth: number;
  /** first member's declaration index (ordering within a layer) */
  first: number;
  /** upstream unit index → true when any edge from it is a Ready edge */
  deps: Map<number, boolean>;
}

/** Longest-path depth of each task by Kahn's algorithm; tasks left over sit on a cycle (one layer after the rest). */
function layerDepths(
  view: DagView,
  idx: ReturnType<typeof indexDag>,
  canonical: (i: number) => boolean,
): { depth: number[]; taskCount: number; hasCycle: boolean } {
  const n = view.nodes.length;
  const depth = new Array<number>(n).fill(0);
  const pending = idx.upstream.map((ups) => ups.length);
  const downstream: number[][] = view.nodes.map(() => []);
  idx.upstream.forEach((ups, to) => ups.forEach((u) => downstream[u.from].push(to)));
  const queue: number[] = [];
  let taskCount = 0;
  for (let i = 0; i < n; i++) {
    if (!canonical(i)) continue;
    taskCount++;
    if (pending[i] === 0) queue.push(i);
  }
  const done = new Array<boolean>(n).fill(false);
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head];
    done[u] = true;
    for (const v of downstream[u]) {
      if (depth[u] + 1 > depth[v]) depth[v] = depth[u] + 1;
      if (--pending[v] === 0) queue.push(v);
    }
  }
  let maxDepth = -1;
  for (const i of queue) maxDepth = Math.max(maxDepth, depth[i]);
  const cycleDepth = maxDepth + 1;
  let hasCycle = false;
  for (let i = 0; i < n; i++) {
    if (canonical(i) && !done[i]) {
      depth[i] = cycleDepth;
      hasCycle = true;
    }
  }
  return { depth, taskCount, hasCycle };
}

export function toAscii(view: DagView, opts: AsciiOptions = {}): string {
  const maxLines = opts.maxLines ?? 200;
  const idx = indexDag(view);
  const n = view.nodes.length;
  const canonical = (i: number): boolean => idx.indexOf.get(view.nodes[i].id) === i;

  const { depth, taskCount, hasCycle } = layerDepths(view, idx, canonical);

  // Units: one per task, or one per collapsed replica group.
  const collapseAll = opts.collapse === 'always' || (opts.collapse !== 'never' && taskCount > 200);
  const unitOf = new Array<number>(n).fill(-1);
  const units: Unit[] = [];
  for (let i = 0; i < n; i++) {
    if (!canonical(i) || unitOf[i] !== -1) continue;
    const g = view.nodes[i].group;
    const members = g !== undefined ? idx.groups.get(g)! : [i];
    const collapse = members.length > 1 && (collapseAll || (opts.collapse !== 'never' && members.length > 4));
    if (!collapse) {
      unitOf[i] = units.length;
      units.push({
        name: view.nodes[i].label,
        text: nodeText(view.nodes[i]),
        depth: depth[i],
        first: i,
        deps: new Map(),
      });
      continue;
    }
    let d = Infinity;
    for (const m of members) {
      unitOf[m] = units.length;
      d = Math.min(d, depth[m]);
    }
    units.push({
      name: `${g}[0..${members.length - 1}]`,
      text: groupText(view, g!, members),
      depth: d,
      first: i,
      deps: new Map(),
    });
  }
  for (let i = 0; i < n; i++) {
    if (unitOf[i] === -1) continue;
    const unit = units[unitOf[i]];
    for (const up of idx.upstream[i]) {
      const from = unitOf[up.from];
      if (from === unitOf[i]) continue;
      unit.deps.set(from, (unit.deps.get(from) ?? false) || up.label === 'Ready');
    }
  }

  // Bucket units by depth (counting sort keeps declaration order inside a layer).
  const layerCount = units.reduce((m, u) => Math.max(m, u.depth + 1), 0);
  const layers: Unit[][] = Array.from({ length: layerCount }, () => []);
  for (const u of units) layers[u.depth].push(u);
  const nonEmpty = layers.filter((l) => l.length > 0);

  const header = `DAG ${view.workflow}: ${taskCount} task${taskCount === 1 ? '' : 's'}, ${idx.edges.length} edge${
    idx.edges.length === 1 ? '' : 's'
  }, ${nonEmpty.length - (hasCycle ? 1 : 0)} layer${nonEmpty.length - (hasCycle ? 1 : 0) === 1 ? '' : 's'}`;
  const lines: string[] = [header];
  if (taskCount === 0) return `${header}\n(no tasks)\n`;
  const total = nonEmpty.length + units.length;
  const budget = Math.max(1, maxLines);
  let written = 0;
  outer: for (let li = 0; li < nonEmpty.length; li++) {
    const layer = nonEmpty[li];
    if (written >= budget) break;
    lines.push(hasCycle && li === nonEmpty.length - 1 ? 'Unordered (dependency cycle)' : `Layer ${li}`);
    written++;
    let pad = 0;
    for (const u of layer) if (u.deps.size > 0) pad = Math.max(pad, Math.min(u.text.length, MAX_PAD));
    for (let k = 0; k < layer.length; k++) {
      if (written >= budget) break outer;
      const u = layer[k];
      const branch = k === layer.length - 1 ? '└─ ' : '├─ ';
      lines.push(`${branch}${u.deps.size > 0 ? u.text.padEnd(pad) : u.text}${depsText(u, units)}`);
      written++;
    }
  }
  if (written < total) lines.push(`… (+${total - written} more lines)`);
  return lines.join('\n') + '\n';
}

function groupText(view: DagView, base: string, members: number[]): string {
  const first = view.nodes[members[0]];
  let text = `${base}[0..${members.length - 1}]  ×${members.length}`;
  if (members.some((m) => view.nodes[m].sequential)) text += ' sequential';
  const gpus = new Set(members.map((m) => view.nodes[m].gpus ?? 0));
  if (gpus.size === 1 && (first.gpus ?? 0) > 0) text += `  gpus=${first.gpus} each`;
  else if (gpus.size > 1) text += `  gpus=${Math.min(...gpus)}..${Math.max(...gpus)}`;
  return text;
}

function depsText(unit: Unit, units: Unit[]): string {
  if (unit.deps.size === 0) return '';
  const parts: string[] = [];
  for (const [from, ready] of unit.deps) {
    if (parts.length === MAX_DEPS_SHOWN) break;
    parts.push(ready ? `${units[from].name} (ready)` : units[from].name);
  }
  const more = unit.deps.size - parts.length;
  return `  ← ${parts.join(', ')}${more > 0 ? `, +${more} more` : ''}`;
}
