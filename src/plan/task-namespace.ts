/**
 * The `task` expression namespace (scripts only, spec config.md §3.3): task name → {nodes, gpus,
 * backend, operator}; a replicated base name → the list of its replicas' records.
 */
import type { Value } from '../config/expr/index.js';
import type { PlannedNode } from './types.js';

export interface TaskFacts {
  name: string;
  base: string;
  replicated: boolean;
  nodes: PlannedNode[];
  gpus: number[] | null;
  backend: string;
  operator: string;
}

export function taskRecord(t: TaskFacts): Value {
  return {
    nodes: t.nodes.map((n, i) => ({ name: n.name, ip_address: n.ip, index: i, num_gpus: n.numGpus })),
    gpus: t.gpus ?? [],
    backend: t.backend,
    operator: t.operator,
  };
}

export function taskNamespace(all: TaskFacts[]): Record<string, Value> {
  const ns: Record<string, Value> = Object.create(null) as Record<string, Value>;
  const groups = new Map<string, Value[]>();
  for (const t of all) {
    const rec = taskRecord(t);
    ns[t.name] = rec;
    if (t.replicated) {
      const g = groups.get(t.base);
      if (g) g.push(rec);
      else groups.set(t.base, [rec]);
    }
  }
  for (const [base, list] of groups) ns[base] = list;
  return ns;
}

/** Hint for a failing `${{ task… }}` in a script (spec config.md §3.7). */
export function taskExpressionHint(expr: string, all: TaskFacts[]): string {
  const m =
    /task\s*\.\s*([A-Za-z_][\w-]*)(\s*\.\s*(\w+))?/.exec(expr) ??
    /task\s*\[\s*['"]([^'"]+)['"]\s*\]/.exec(expr);
  const plain = [...new Set(all.filter((t) => !t.replicated).map((t) => t.name))];
  const replicated = [...new Set(all.filter((t) => t.replicated).map((t) => t.base))];
  if (!m)
    return `available tasks: ${plain.join(', ') || '(none)'}; replicated tasks: ${replicated.join(', ') || '(none)'}`;
  const name = m[1];
  const attr = m[3];
  if (replicated.includes(name) && attr) {
    return `'${name}' is replicated: use task.${name}[0].${attr} or task.${name}_0.${attr}`;
  }
  if (!plain.includes(name) && !replicated.includes(name) && !all.some((t) => t.name === name)) {
    return `unknown task '${name}'; available tasks: ${plain.join(', ') || '(none)'}; replicated tasks: ${replicated.join(', ') || '(none)'}`;
  }
  if (attr && !['nodes', 'gpus', 'backend', 'operator'].includes(attr)) {
    return `unknown task attribute '${attr}'; a task has: nodes, gpus, backend, operator`;
  }
  return 'a node has: name, ip_address, index, num_gpus';
}
