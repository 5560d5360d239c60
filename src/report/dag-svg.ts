/**
 * The DAG as inline SVG, laid out here (layers by longest path, one barycentre pass to reduce
 * crossings) rather than by Graphviz: loading its WASM and laying out 120 nodes takes ~0.9 s,
 * this takes milliseconds, and the report is built at the end of every run. Nodes are coloured
 * by their final status; large replica groups are one node (`base[0..N-1] ×N`, worst status
 * wins). Above MAX_NODES the text drawing of `--dry-run` is shown instead.
 */
import { toAscii } from '../visualize/ascii.js';
import { collapseReplicaGroups } from '../visualize/collapse.js';
import type { DagView } from '../visualize/dag-view.js';
import type { TaskStatus } from '../events/events.js';
import type { ReportModel } from './model.js';
import { clip, esc } from './html.js';

const MAX_NODES = 300;
const MAX_WIDTH = 4000;
const NODE_H = 26;
const GAP_X = 14;
const GAP_Y = 54;
const PAD = 10;

/** A task's planned graph, as the visualisers draw it (same shape as plan/dag-view.ts). */
export function modelDagView(m: ReportModel): DagView {
  const service = new Set(m.tasks.filter((t) => t.info?.service).map((t) => t.name));
  return {
    workflow: m.workflow,
    nodes: m.tasks.map((t) => ({
      id: t.name,
      label: t.name,
      ...(t.info?.replica ? { group: t.info.base } : {}),
      ...(t.info?.replica?.sequential ? { sequential: true } : {}),
    })),
    edges: m.tasks.flatMap((t) =>
      (t.info?.dependsOn ?? []).map((d) => ({
        from: d,
        to: t.name,
        label: service.has(d) ? ('Ready' as const) : ('Completed' as const),
      })),
    ),
  };
}

const SEVERITY: TaskStatus[] = [
  'FAILED',
  'CANCELLED',
  'RUNNING',
  'SUBMITTED',
  'PENDING',
  'READY',
  'COMPLETED',
];

function worst(statuses: TaskStatus[]): TaskStatus {
  for (const s of SEVERITY) if (statuses.includes(s)) return s;
  return 'PENDING';
}

interface Box {
  id: string;
  label: string;
  status: TaskStatus;
  title: string;
  layer: number;
  order: number;
  w: number;
  x: number;
  y: number;
}

export function dagSvg(m: ReportModel): { html: string; nodes: number } {
  const full = modelDagView(m);
  const view = collapseReplicaGroups(full, 6);
  if (view.nodes.length > MAX_NODES) {
    return {
      html: `<p class="note">${view.nodes.length} nodes after grouping replicas: too many to draw; the layered text view follows.</p><pre class="ascii">${esc(toAscii(full, { collapse: 'always' }))}</pre>`,
      nodes: 0,
    };
  }
  const status = new Map(m.tasks.map((t) => [t.name, t.status]));
  const membersOf = new Map<string, TaskStatus[]>();
  for (const t of m.tasks) {
    if (!t.info?.replica) continue;
    const list = membersOf.get(t.info.base) ?? [];
    list.push(t.status);
    membersOf.set(t.info.base, list);
  }
  const index = new Map(view.nodes.map((n, i) => [n.id, i]));
  const ups: number[][] = view.nodes.map(() => []);
  const downs: number[][] = view.nodes.map(() => []);
  for (const e of view.edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    ups[b].push(a);
    downs[a].push(b);
  }
  // longest-path layers (Kahn); nodes on a cycle (none in a valid plan) go last
  const layer = new Array<number>(view.nodes.length).fill(0);
  const pending = ups.map((u) => u.length);
  const queue = view.nodes.map((_, i) => i).filter((i) => pending[i] === 0);
  for (let h = 0; h < queue.length; h++) {
    const u = queue[h];
    for (const v of downs[u]) {
      layer[v] = Math.max(layer[v], layer[u] + 1);
      if (--pending[v] === 0) queue.push(v);
    }
  }
  const boxes: Box[] = view.nodes.map((n, i) => {
    const own = status.get(n.id);
    const st = own ?? worst(membersOf.get(n.group ?? '') ?? []);
    const label = clip(n.label, 30);
    return {
      id: n.id,
      label,
      status: st,
      title: own ? `${n.id}: ${st}` : `${n.label}: ${summarise(membersOf.get(n.group ?? '') ?? [])}`,
      layer: layer[i],
      order: i,
      w: Math.min(230, 7 * label.length + 20),
      x: 0,
      y: 0,
    };
  });
  const layers: number[][] = [];
  boxes.forEach((b, i) => (layers[b.layer] ??= []).push(i));
  // one barycentre pass: a node sits near the mean position of its upstream nodes
  for (let l = 1; l < layers.length; l++) {
    const prev = new Map((layers[l - 1] ?? []).map((n, k) => [n, k]));
    const key = (n: number) => {
      const ps = ups[n].map((u) => prev.get(u)).filter((k): k is number => k !== undefined);
      return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : Number.MAX_SAFE_INTEGER;
    };
    layers[l] = (layers[l] ?? [])
      .map((n) => [n, key(n)] as const)
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .map(([n]) => n);
  }
  const widths = layers.map(
    (ns) => (ns ?? []).reduce((s, n) => s + boxes[n].w, 0) + GAP_X * Math.max(0, (ns ?? []).length - 1),
  );
  const width = Math.max(200, ...widths) + 2 * PAD;
  if (width > MAX_WIDTH) {
    return {
      html: `<p class="note">The graph is ${Math.round(width)} px wide: the layered text view follows.</p><pre class="ascii">${esc(toAscii(full, { collapse: 'always' }))}</pre>`,
      nodes: 0,
    };
  }
  layers.forEach((ns, l) => {
    let x = PAD + (width - 2 * PAD - widths[l]) / 2;
    for (const n of ns ?? []) {
      boxes[n].x = x;
      boxes[n].y = PAD + l * (NODE_H + GAP_Y);
      x += boxes[n].w + GAP_X;
    }
  });
  const height = PAD * 2 + layers.length * (NODE_H + GAP_Y) - GAP_Y;
  return { html: svgOf(view, index, boxes, width, height), nodes: boxes.length };
}

/** the SVG of placed boxes and the edges between them (curves; Ready edges marked) */
function svgOf(
  view: ReturnType<typeof collapseReplicaGroups>,
  index: Map<string, number>,
  boxes: Box[],
  width: number,
  height: number,
): string {
  const f = (n: number) => n.toFixed(1);
  const out: string[] = [
    `<svg class="dag" xmlns="http://www.w3.org/2000/svg" width="${f(width)}" height="${f(height)}" viewBox="0 0 ${f(width)} ${f(height)}" role="img" aria-label="task graph">`,
    '<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L8 4L0 8Z" fill="#8796a8"/></marker></defs>',
  ];
  for (const e of view.edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    const A = boxes[a];
    const B = boxes[b];
    const x1 = A.x + A.w / 2;
    const y1 = A.y + NODE_H;
    const x2 = B.x + B.w / 2;
    const y2 = B.y;
    const my = (y1 + y2) / 2;
    out.push(
      `<path class="edge${e.label === 'Ready' ? ' on-ready' : ''}" marker-end="url(#arrow)" d="M${f(x1)} ${f(y1)}C${f(x1)} ${f(my)} ${f(x2)} ${f(my)} ${f(x2)} ${f(y2 - 1)}"><title>${esc(`${e.from} → ${e.to} (on ${e.label.toLowerCase()})`)}</title></path>`,
    );
  }
  for (const b of boxes) {
    out.push(
      `<g class="node" data-task="${esc(b.id)}"><rect class="s-${b.status}" x="${f(b.x)}" y="${f(b.y)}" width="${f(b.w)}" height="${NODE_H}" rx="5"/><text x="${f(b.x + b.w / 2)}" y="${f(b.y + NODE_H / 2 + 4)}">${esc(b.label)}</text><title>${esc(b.title)}</title></g>`,
    );
  }
  out.push('</svg>');
  return out.join('');
}

function summarise(statuses: TaskStatus[]): string {
  const n = new Map<string, number>();
  for (const s of statuses) n.set(s, (n.get(s) ?? 0) + 1);
  return [...n].map(([s, c]) => `${c} ${s}`).join(', ');
}
