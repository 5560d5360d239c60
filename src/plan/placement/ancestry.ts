/**
 * Dependency structure for time-compatibility (placement.md §5.3): a stable topological processing
 * order and "is X an upstream dependency of T".
 *
 * Tasks with the same parent list (replicas of one task, the common case) form one *group*, so the
 * work is proportional to distinct parent lists, not to expanded edges. Ancestor queries walk the
 * groups upwards, pruned by depth (an ancestor is always shallower), and are memoised per
 * (group, candidate) — the planner asks about few distinct candidates (the owners of slots it scans).
 */
import type { PlacementRequest } from './types.js';
import { placementError, quoteList } from './errors.js';

export interface Ancestry {
  /** request indices in processing order (declaration order, moved only to respect dependencies) */
  order: number[];
  /** true when request `x` is a (transitive) dependency of request `t` */
  isAncestor(x: number, t: number): boolean;
}

interface Group {
  /** sorted unique parent request indices */
  parents: number[];
  members: number[];
  lookup?: Set<number>;
}

export function buildAncestry(requests: readonly PlacementRequest[]): Ancestry {
  const n = requests.length;
  const byName = new Map<string, number>();
  requests.forEach((r, i) => {
    if (byName.has(r.task))
      throw placementError('DUPLICATE_TASK', `Task '${r.task}' is listed twice`, undefined, { task: r.task });
    byName.set(r.task, i);
  });
  const { groups, groupOf } = groupParents(requests, byName);
  const { order, depth } = stableTopoOrder(groups, groupOf, requests);
  const memo = new Map<number, boolean>();

  const hasParent = (g: Group, x: number): boolean => {
    if (g.parents.length <= 8) return g.parents.includes(x);
    g.lookup ??= new Set(g.parents);
    return g.lookup.has(x);
  };

  return {
    order,
    isAncestor(x: number, t: number): boolean {
      if (depth[x] >= depth[t]) return false;
      const start = groupOf[t];
      const key = start * n + x;
      const known = memo.get(key);
      if (known !== undefined) return known;
      const seen = new Set<number>([start]);
      const stack = [start];
      let found = false;
      while (!found) {
        const next = stack.pop();
        if (next === undefined) break;
        const g = groups[next];
        if (hasParent(g, x)) found = true;
        else {
          for (const p of g.parents) {
            const pg = groupOf[p];
            if (depth[p] > depth[x] && !seen.has(pg)) {
              seen.add(pg);
              stack.push(pg);
            }
          }
        }
      }
      memo.set(key, found);
      return found;
    },
  };
}

/** parent lists (explicit edges + sequential chaining), de-duplicated into groups */
function groupParents(
  requests: readonly PlacementRequest[],
  byName: Map<string, number>,
): { groups: Group[]; groupOf: Int32Array } {
  const byArray = new Map<readonly string[], number[]>();
  const parents = requests.map((r) => {
    let ps = byArray.get(r.dependsOn);
    if (!ps) {
      ps = [];
      for (const d of r.dependsOn) {
        const p = byName.get(d);
        if (p === undefined) {
          throw placementError(
            'UNKNOWN_DEPENDENCY',
            `Task '${r.task}' depends on unknown task '${d}'`,
            undefined,
            { task: r.task },
          );
        }
        ps.push(p);
      }
      ps = sortedUnique(ps);
      byArray.set(r.dependsOn, ps);
    }
    return ps;
  });
  const sequential = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (r.policy !== 'sequential') return;
    const key = `${r.backend}\u0000${r.base}`;
    const group = sequential.get(key) ?? [];
    group.push(i);
    sequential.set(key, group);
  });
  for (const chain of sequential.values()) {
    chain.sort((a, b) => requests[a].replicaIndex - requests[b].replicaIndex || a - b);
    for (let k = 1; k < chain.length; k++) {
      const t = chain[k];
      if (!parents[t].includes(chain[k - 1])) parents[t] = sortedUnique([...parents[t], chain[k - 1]]);
    }
  }
  const groups: Group[] = [];
  const groupOf = new Int32Array(requests.length);
  const byContent = new Map<number, number[]>();
  const byList = new Map<number[], number>();
  parents.forEach((raw, t) => {
    const ps = raw.includes(t) ? raw.filter((p) => p !== t) : raw;
    let g = byList.get(ps);
    if (g === undefined) {
      const h = hash(ps);
      const bucket = byContent.get(h) ?? [];
      g = bucket.find((c) => sameList(groups[c].parents, ps));
      if (g === undefined) {
        g = groups.length;
        groups.push({ parents: ps, members: [] });
        bucket.push(g);
        byContent.set(h, bucket);
      }
      byList.set(ps, g);
    }
    groups[g].members.push(t);
    groupOf[t] = g;
  });
  return { groups, groupOf };
}

function hash(ps: number[]): number {
  let h = ps.length;
  for (const p of ps) h = (Math.imul(h, 31) + p) | 0;
  return h;
}

function sameList(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sortedUnique(ps: number[]): number[] {
  for (let i = 1; i < ps.length; i++) {
    if (ps[i] <= ps[i - 1]) return [...new Set(ps)].sort((a, b) => a - b);
  }
  return ps;
}

/** Kahn's algorithm over groups, always taking the lowest declaration index that is ready. */
function stableTopoOrder(
  groups: Group[],
  groupOf: Int32Array,
  requests: readonly PlacementRequest[],
): { order: number[]; depth: Int32Array } {
  const n = requests.length;
  const pending = new Int32Array(groups.length);
  const childGroups: number[][] = Array.from({ length: n }, () => []);
  const depth = new Int32Array(n);
  const heap = new MinHeap();
  groups.forEach((g, gi) => {
    pending[gi] = g.parents.length;
    for (const p of g.parents) childGroups[p].push(gi);
    if (g.parents.length === 0) for (const m of g.members) heap.push(m);
  });
  const order: number[] = [];
  while (heap.size > 0) {
    const t = heap.pop();
    order.push(t);
    for (const gi of childGroups[t]) {
      if (--pending[gi] !== 0) continue;
      const g = groups[gi];
      let d = 0;
      for (const p of g.parents) d = Math.max(d, depth[p] + 1);
      for (const m of g.members) {
        depth[m] = d;
        heap.push(m);
      }
    }
  }
  if (order.length !== n) {
    const stuck: string[] = [];
    for (let i = 0; i < n && stuck.length < 8; i++) if (pending[groupOf[i]] > 0) stuck.push(requests[i].task);
    throw placementError('DEPENDENCY_CYCLE', `Tasks ${quoteList(stuck)} depend on each other in a cycle`);
  }
  return { order, depth };
}

class MinHeap {
  private items: number[] = [];
  get size(): number {
    return this.items.length;
  }
  push(v: number): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up] <= v) break;
      a[i] = a[up];
      i = up;
    }
    a[i] = v;
  }
  pop(): number {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (last !== undefined && a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r] < a[l] ? r : l;
        if (a[c] >= last) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
