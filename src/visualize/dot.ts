/**
 * Graphviz DOT export (cli.md §9.4): `start` → every task without dependencies, every task without
 * dependents → `stop`, edges labelled Ready/Completed, replicas in `cluster_<base>` subgraphs (their
 * internal, e.g. sequential-chain, edges drawn inside), optional variables note cluster.
 */
import { collapseReplicaGroups } from './collapse.js';
import { type DagView, freeId, indexDag, nodeText, variableLines } from './dag-view.js';

export interface DotOptions {
  /** resolved variables, drawn as a note in a `cluster_variables` subgraph (`--show-variables`) */
  variables?: Record<string, string>;
  /** draw each replica group of more than this many tasks as one `base[0..N-1]` node (default: never) */
  collapseGroupsOver?: number;
}

/** Above this many nodes the layout gets iteration limits: `dot` is superlinear on wide graphs. */
const LARGE_GRAPH = 150;

/** A DOT double-quoted string: backslashes and quotes escaped, newlines as `\n`. */
export function dotQuote(s: string): string {
  return `"${s
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\r\n|\r|\n/g, '\\n')}"`;
}

/**
 * Graphviz has built-in metrics for DejaVu Sans, the font PNG rendering uses, so boxes fit their
 * labels; renderSvg widens the SVG font-family with similar fallbacks for browsers.
 */
export const DOT_FONT = 'DejaVu Sans';
const FONT = DOT_FONT;

export function toDot(fullView: DagView, opts: DotOptions = {}): string {
  const view =
    opts.collapseGroupsOver !== undefined
      ? collapseReplicaGroups(fullView, opts.collapseGroupsOver)
      : fullView;
  const idx = indexDag(view);
  const q = dotQuote;
  const out: string[] = [];
  out.push(`digraph ${q(view.workflow)} {`);
  out.push(
    `  graph [rankdir=TB, fontname=${q(FONT)}, label=${q(view.workflow)}, labelloc=t${
      view.nodes.length > LARGE_GRAPH ? ', newrank=true, nslimit=2, mclimit=0.5' : ''
    }];`,
  );
  out.push(`  node [fontname=${q(FONT)}, shape=box, style="rounded,filled", fillcolor="#eef3fb"];`);
  out.push(`  edge [fontname=${q(FONT)}, fontsize=10];`);

  const start = freeId('start', idx.indexOf);
  const stop = freeId('stop', new Set([...idx.indexOf.keys(), start]));
  out.push(`  ${q(start)} [label="start", shape=ellipse, style=filled, fillcolor="#c8e6c9"];`);
  out.push(`  ${q(stop)} [label="stop", shape=ellipse, style=filled, fillcolor="#ffcdd2"];`);

  const vars = variableLines(opts.variables);
  if (vars.length > 0) {
    const noteId = freeId('variables', new Set([...idx.indexOf.keys(), start, stop]));
    const body = vars.map((l) => q(l).slice(1, -1) + '\\l').join('');
    out.push(`  subgraph "cluster_variables" {`);
    out.push(`    label="Variables"; style=dashed; fontname=${q(FONT)};`);
    out.push(`    ${q(noteId)} [shape=note, style=filled, fillcolor="#fffde7", label="${body}"];`);
    out.push(`  }`);
  }

  const isCanonical = (i: number): boolean => idx.indexOf.get(view.nodes[i].id) === i;
  const nodeLine = (i: number, indent: string): string =>
    `${indent}${q(view.nodes[i].id)} [label=${q(nodeText(view.nodes[i]))}];`;
  const edgeLine = (from: string, to: string, label: string | undefined, indent: string): string =>
    `${indent}${q(from)} -> ${q(to)}${label ? ` [label=${q(label)}]` : ''};`;

  // Edges internal to one replica group are drawn inside its cluster.
  const groupOf = (id: string): string | undefined => view.nodes[idx.indexOf.get(id)!].group;
  const internal = new Map<string, string[]>();
  const external: string[] = [];
  for (const e of idx.edges) {
    const g = groupOf(e.from);
    if (g !== undefined && g === groupOf(e.to)) {
      const list = internal.get(g) ?? [];
      list.push(edgeLine(e.from, e.to, e.label, '    '));
      internal.set(g, list);
    } else external.push(edgeLine(e.from, e.to, e.label, '  '));
  }

  const emitted = new Set<string>();
  view.nodes.forEach((n, i) => {
    if (!isCanonical(i)) return;
    if (n.group === undefined) {
      out.push(nodeLine(i, '  '));
      return;
    }
    if (emitted.has(n.group)) return;
    emitted.add(n.group);
    const members = idx.groups.get(n.group)!;
    const sequential = members.some((m) => view.nodes[m].sequential);
    out.push(`  subgraph ${q(`cluster_${n.group}`)} {`);
    out.push(
      `    label=${q(n.group)}; style=${sequential ? '"rounded,dashed"' : 'rounded'}; color="#7a8fb0";`,
    );
    for (const m of members) out.push(nodeLine(m, '    '));
    out.push(...(internal.get(n.group) ?? []));
    out.push('  }');
  });

  let nodes = 0;
  view.nodes.forEach((n, i) => {
    if (!isCanonical(i)) return;
    nodes++;
    if (idx.upstream[i].length === 0) out.push(edgeLine(start, n.id, undefined, '  '));
  });
  out.push(...external);
  view.nodes.forEach((n, i) => {
    if (isCanonical(i) && idx.outDegree[i] === 0) out.push(edgeLine(n.id, stop, undefined, '  '));
  });
  if (nodes === 0) out.push(edgeLine(start, stop, undefined, '  '));
  out.push('}');
  return out.join('\n') + '\n';
}
