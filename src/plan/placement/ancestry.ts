/**
 * Dependency structure for time-compatibility (placement.md §5.3): a stable topological processing
 * order and "is X an ancestor of T" answered in O(1) from per-task ancestor bitsets. Tasks whose
 * parent sets are identical (replicas of one task, the common case) share one bitset, so memory and
 * time stay proportional to the number of distinct parent sets, not to tasks².
 */
import type { PlacementRequest } from './types.js';
import { placementError, quoteList } from './errors.js';

export interface Ancestry {
  /** request indices in processing order (declaration order, moved only to respect dependencies) */
  order: number[];
  /** true when request `x` is a (transitive) dependency of request `t` */
  isAncestor(x: number, t: number): boolean;
}

export function buildAncestry(requests: readonly PlacementRequest[]): Ancestry {
  const n = requests.length;
  const byName = new Map<string, number>();
  requests.forEach((r, i) => {
    if (byName.has(r.task)) throw placementError('DUPLICATE_TASK', `Task '${r.task}' is listed twice`);
    byName.set(r.task, i);
  });
  const parents = collectParents(requests, byName);
  const order = stableTopoOrder(parents, requests);
  const words = (n + 31) >>> 5;
  const anc: (Uint32Array | null)[] = new Array<Uint32Array | null>(n).fill(null);
  const shared = new Map<string, Uint32Array>();
  for (const t of order) {
    const ps = parents[t];
    if (ps.length === 0) continue;
    const key = ps.join(',');
    let bits = shared.get(key);
    if (!bits) {
      bits = new Uint32Array(words);
      for (const p of ps) {
        bits[p >>> 5] |= 1 << (p & 31);
        const pa = anc[p];
        if (pa) for (let w = 0; w < words; w++) bits[w] |= pa[w];
      }
      shared.set(key, bits);
    }
    anc[t] = bits;
  }
  return {
    order,
    isAncestor(x: number, t: number): boolean {
      const bits = anc[t];
      return bits !== null && (bits[x >>> 5] & (1 << (x & 31))) !== 0;
    },
  };
}

/** sorted, de-duplicated parent indices of every request (explicit edges + sequential chaining) */
function collectParents(requests: readonly PlacementRequest[], byName: Map<string, number>): number[][] {
  const sets = requests.map((r) => {
    const s = new Set<number>();
    for (const d of r.dependsOn) {
      const p = byName.get(d);
      if (p === undefined) {
        throw placementError('UNKNOWN_DEPENDENCY', `Task '${r.task}' depends on unknown task '${d}'`);
      }
      if (p !== byName.get(r.task)) s.add(p);
    }
    return s;
  });
  const sequential = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (r.policy !== 'sequential') return;
    const key = `${r.backend}\u0000${r.base}`;
    const group = sequential.get(key) ?? [];
    group.push(i);
    sequential.set(key, group);
  });
  for (const group of sequential.values()) {
    group.sort((a, b) => requests[a].replicaIndex - requests[b].replicaIndex || a - b);
    for (let k = 1; k < group.length; k++) sets[group[k]].add(group[k - 1]);
  }
  return sets.map((s) => [...s].sort((a, b) => a - b));
}

/** Kahn's algorithm always taking the lowest declaration index that is ready. */
function stableTopoOrder(parents: number[][], requests: readonly PlacementRequest[]): number[] {
  const n = parents.length;
  const children: number[][] = Array.from({ length: n }, () => []);
  const pending = new Int32Array(n);
  parents.forEach((ps, t) => {
    pending[t] = ps.length;
    for (const p of ps) children[p].push(t);
  });
  const heap = new MinHeap();
  for (let i = 0; i < n; i++) if (pending[i] === 0) heap.push(i);
  const order: number[] = [];
  while (heap.size > 0) {
    const t = heap.pop();
    order.push(t);
    for (const c of children[t]) if (--pending[c] === 0) heap.push(c);
  }
  if (order.length !== n) {
    const stuck = [];
    for (let i = 0; i < n && stuck.length < 8; i++) if (pending[i] > 0) stuck.push(requests[i].task);
    throw placementError('DEPENDENCY_CYCLE', `Tasks ${quoteList(stuck)} depend on each other in a cycle`);
  }
  return order;
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
    const last = a.pop() as number;
    if (a.length > 0) {
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
