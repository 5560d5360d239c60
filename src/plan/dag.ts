/**
 * The task graph: cycle detection on declared tasks (the loop spelled out edge by edge, plus the
 * tasks waiting behind it), concrete edges between replicas (spec config.md §5.7), and a stable
 * topological order.
 */
import { SflowError } from '../util/sflow-error.js';

export interface BaseTask {
  name: string;
  dependsOn: string[];
  policy: 'parallel' | 'sequential';
  instances: string[];
}

export function findCycle(tasks: BaseTask[]): string[] | null {
  const deps = new Map(tasks.map((t) => [t.name, t.dependsOn]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    state.set(n, 1);
    stack.push(n);
    for (const d of deps.get(n) ?? []) {
      if (!deps.has(d)) continue;
      const s = state.get(d);
      if (s === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (s === undefined) {
        const c = visit(d);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 2);
    return null;
  };
  for (const t of tasks) {
    if (!state.has(t.name)) {
      const c = visit(t.name);
      if (c) return c;
    }
  }
  return null;
}

export function cycleError(
  tasks: BaseTask[],
  cycle: string[],
  location?: SflowError['location'],
): SflowError {
  const edges: string[] = [];
  for (let i = 0; i + 1 < cycle.length; i++) edges.push(`'${cycle[i]}' depends_on '${cycle[i + 1]}'`);
  const inCycle = new Set(cycle);
  const dependents = new Map<string, string[]>();
  for (const t of tasks)
    for (const d of t.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), t.name]);
  const waiting = new Set<string>();
  const queue = [...inCycle];
  while (queue.length) {
    const n = queue.pop()!;
    for (const m of dependents.get(n) ?? []) {
      if (!inCycle.has(m) && !waiting.has(m)) {
        waiting.add(m);
        queue.push(m);
      }
    }
  }
  const self = cycle.length === 2;
  const msg =
    `Dependency cycle: ${edges.join(', ')}` +
    (self ? ' (a task cannot depend on itself)' : '') +
    (waiting.size ? `\n  Waiting behind it: ${[...waiting].join(', ')}` : '');
  return new SflowError('plan.cycle', msg, {
    phase: 'plan',
    location,
    hint: 'remove one depends_on (or required_by) edge of the loop',
  });
}

/**
 * Concrete dependency edges for every instance. The parallel replicas of a task share one list
 * (read-only to every stage after the plan; 10,000 replicas need not carry 10,000 copies).
 */
export function concreteDependencies(tasks: BaseTask[]): Map<string, string[]> {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const out = new Map<string, string[]>();
  const targetsOf = (base: string): string[] => {
    const t = byName.get(base);
    if (!t) return [];
    return t.policy === 'sequential' ? t.instances.slice(-1) : t.instances;
  };
  for (const t of tasks) {
    const upstream = [...new Set(t.dependsOn)].flatMap(targetsOf);
    t.instances.forEach((inst, i) => {
      if (t.policy === 'sequential' && i > 0) out.set(inst, [t.instances[i - 1]]);
      else out.set(inst, upstream);
    });
  }
  return out;
}

/** Kahn's algorithm; ties broken by declaration order. */
export function topologicalOrder(names: string[], deps: Map<string, string[]>): string[] {
  const indeg = new Map<string, number>(names.map((n) => [n, 0]));
  const dependents = new Map<string, string[]>();
  for (const n of names) {
    for (const d of deps.get(n) ?? []) {
      indeg.set(n, (indeg.get(n) ?? 0) + 1);
      const list = dependents.get(d);
      if (list) list.push(n);
      else dependents.set(d, [n]);
    }
  }
  const position = new Map(names.map((n, i) => [n, i]));
  const ready = names.filter((n) => indeg.get(n) === 0);
  const order: string[] = [];
  // a binary heap would be O(n log n); declaration order keeps most graphs nearly sorted already
  let head = 0;
  while (head < ready.length) {
    const n = ready[head++];
    order.push(n);
    const next: string[] = [];
    for (const m of dependents.get(n) ?? []) {
      const v = (indeg.get(m) ?? 0) - 1;
      indeg.set(m, v);
      if (v === 0) next.push(m);
    }
    next.sort((a, b) => position.get(a)! - position.get(b)!);
    ready.push(...next);
  }
  return order;
}
