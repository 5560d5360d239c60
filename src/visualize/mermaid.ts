/**
 * Mermaid `flowchart TD` export: the same content as the DOT export (start/stop nodes, labelled
 * edges, one `subgraph` per replica group) with ids made safe for Mermaid and variables as `%%` comments.
 */
import { collapseReplicaGroups } from './collapse.js';
import { type DagView, indexDag, nodeText, variableLines } from './dag-view.js';

export interface MermaidOptions {
  /** resolved variables, written as `%%` comment lines (`--show-variables`) */
  variables?: Record<string, string>;
  /** draw each replica group of more than this many tasks as one `base[0..N-1]` node (default: never) */
  collapseGroupsOver?: number;
}

/** Text inside a Mermaid `"…"` label: entity codes for the characters Mermaid would interpret. */
export function mermaidText(s: string): string {
  return s
    .replace(/\r\n|\r|\n/g, ' ')
    .replace(/#/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;');
}

/** Hands out Mermaid-safe, unique ids: `[A-Za-z0-9_]` only, prefixed so no id is a keyword (`end`). */
class IdAllocator {
  private readonly used = new Set<string>(['start', 'stop']);

  take(prefix: string, name: string): string {
    const base = `${prefix}${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
    let id = base;
    for (let i = 2; this.used.has(id); i++) id = `${base}_${i}`;
    this.used.add(id);
    return id;
  }
}

export function toMermaid(fullView: DagView, opts: MermaidOptions = {}): string {
  const view =
    opts.collapseGroupsOver !== undefined
      ? collapseReplicaGroups(fullView, opts.collapseGroupsOver)
      : fullView;
  const idx = indexDag(view);
  const ids = new IdAllocator();
  const nodeId = view.nodes.map((n, i) => (idx.indexOf.get(n.id) === i ? ids.take('t_', n.id) : ''));
  const idOf = (taskId: string): string => nodeId[idx.indexOf.get(taskId)!];

  const out: string[] = ['flowchart TD'];
  out.push(`  %% workflow: ${view.workflow.replace(/\r?\n/g, ' ')}`);
  const vars = variableLines(opts.variables);
  if (vars.length > 0) {
    out.push('  %% variables:');
    for (const line of vars) out.push(`  %%   ${line}`);
  }
  out.push('  start(["start"])');
  out.push('  stop(["stop"])');

  const groupOf = (id: string): string | undefined => view.nodes[idx.indexOf.get(id)!].group;
  const edgeText = (from: string, to: string, label: string): string =>
    `${idOf(from)} -->|${label}| ${idOf(to)}`;
  const internal = new Map<string, string[]>();
  const external: string[] = [];
  for (const e of idx.edges) {
    const g = groupOf(e.from);
    if (g !== undefined && g === groupOf(e.to)) {
      const list = internal.get(g) ?? [];
      list.push(`    ${edgeText(e.from, e.to, e.label)}`);
      internal.set(g, list);
    } else external.push(`  ${edgeText(e.from, e.to, e.label)}`);
  }

  const nodeDecl = (i: number, indent: string): string =>
    `${indent}${nodeId[i]}["${mermaidText(nodeText(view.nodes[i]))}"]`;
  const emitted = new Set<string>();
  view.nodes.forEach((n, i) => {
    if (nodeId[i] === '') return;
    if (n.group === undefined) {
      out.push(nodeDecl(i, '  '));
      return;
    }
    if (emitted.has(n.group)) return;
    emitted.add(n.group);
    out.push(`  subgraph ${ids.take('g_', n.group)} ["${mermaidText(n.group)}"]`);
    out.push('    direction TB');
    for (const m of idx.groups.get(n.group)!) out.push(nodeDecl(m, '    '));
    out.push(...(internal.get(n.group) ?? []));
    out.push('  end');
  });

  let count = 0;
  view.nodes.forEach((_n, i) => {
    if (nodeId[i] === '') return;
    count++;
    if (idx.upstream[i].length === 0) out.push(`  start --> ${nodeId[i]}`);
  });
  out.push(...external);
  view.nodes.forEach((_n, i) => {
    if (nodeId[i] !== '' && idx.outDegree[i] === 0) out.push(`  ${nodeId[i]} --> stop`);
  });
  if (count === 0) out.push('  start --> stop');
  return out.join('\n') + '\n';
}
