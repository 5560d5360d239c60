/**
 * The dependency structure placement reads (src/plan/placement/ancestry.ts, placement.md §5.3):
 * the processing order (declaration order, moved only to respect dependencies) and "is X an
 * upstream dependency of T", checked against a plain reference on seeded random graphs (shared
 * parent lists, sequential replicas, parent lists past the small-list threshold), and its errors.
 */
import { describe, expect, it } from 'vitest';
import { buildAncestry } from '../../../src/plan/placement/ancestry.js';
import type { PlacementRequest } from '../../../src/plan/placement/types.js';
import { fails, task } from './helpers.js';

/** a small deterministic generator (mulberry32) */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** the parents of every request, spelled out without grouping: edges, then sequential chaining */
function referenceParents(reqs: PlacementRequest[]): Set<number>[] {
  const index = new Map(reqs.map((r, i) => [r.task, i]));
  const parents = reqs.map((r) => new Set(r.dependsOn.map((d) => index.get(d)!)));
  const chains = new Map<string, number[]>();
  reqs.forEach((r, i) => {
    if (r.policy !== 'sequential') return;
    const k = `${r.backend}/${r.base}`;
    chains.set(k, [...(chains.get(k) ?? []), i]);
  });
  for (const c of chains.values()) {
    c.sort((a, b) => reqs[a].replicaIndex - reqs[b].replicaIndex || a - b);
    for (let k = 1; k < c.length; k++) parents[c[k]].add(c[k - 1]);
  }
  parents.forEach((p, i) => p.delete(i));
  return parents;
}

function referenceAncestors(parents: Set<number>[]): Set<number>[] {
  return parents.map((_, t) => {
    const seen = new Set<number>();
    const stack = [...parents[t]];
    while (stack.length) {
      const p = stack.pop()!;
      if (seen.has(p)) continue;
      seen.add(p);
      stack.push(...parents[p]);
    }
    return seen;
  });
}

/** the lowest declaration index whose parents are all placed, again and again */
function referenceOrder(parents: Set<number>[]): number[] {
  const placed = new Set<number>();
  const order: number[] = [];
  while (order.length < parents.length) {
    const next = parents.findIndex((ps, i) => !placed.has(i) && [...ps].every((p) => placed.has(p)));
    order.push(next);
    placed.add(next);
  }
  return order;
}

/** a random DAG of `n` requests: edges only to earlier-declared tasks, shuffled into a new order */
function randomRequests(seed: number, n: number): PlacementRequest[] {
  const r = rng(seed);
  const built: PlacementRequest[] = [];
  let shared: string[] | undefined;
  for (let i = 0; i < n; i++) {
    const kind = r();
    if (kind < 0.15 && i > 0) {
      // sequential replicas of one base, on one of two backends, replica indices out of order
      const base = `s${i}`;
      const backend = r() < 0.5 ? 'b' : 'c';
      const count = 2 + Math.floor(r() * 3);
      const idx = Array.from({ length: count }, (_, k) => k).reverse();
      for (const k of idx)
        built.push({ ...task(`${base}_${k}`, { base, backend, policy: 'sequential', replicaIndex: k })[0] });
      continue;
    }
    const deps: string[] = [];
    const many = kind > 0.9 ? 12 : Math.floor(r() * 4);
    for (let k = 0; k < many && built.length; k++) deps.push(built[Math.floor(r() * built.length)].task);
    if (kind > 0.7 && shared && r() < 0.5) {
      built.push(task(`t${i}`, { dependsOn: shared })[0]); // the same array object as an earlier task
      continue;
    }
    if (r() < 0.1) deps.push(`t${i}`); // a task that names itself is not its own ancestor
    built.push(task(`t${i}`, { dependsOn: deps })[0]);
    shared = deps;
  }
  // declaration order need not follow the dependencies
  for (let i = built.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [built[i], built[j]] = [built[j], built[i]];
  }
  return built;
}

describe('buildAncestry on random graphs', () => {
  it.each([1, 2, 3, 4, 5, 6])('agrees with the reference (seed %i)', (seed) => {
    const reqs = randomRequests(seed, 40);
    const parents = referenceParents(reqs);
    const anc = referenceAncestors(parents);
    const a = buildAncestry(reqs);
    expect(a.order).toEqual(referenceOrder(parents));
    // every pair, twice (the second answer comes from the memo), in two different sweeps
    for (let round = 0; round < 2; round++) {
      for (let t = 0; t < reqs.length; t++)
        for (let x = 0; x < reqs.length; x++) {
          const [xx, tt] = round === 0 ? [x, t] : [reqs.length - 1 - x, reqs.length - 1 - t];
          expect(a.isAncestor(xx, tt), `${reqs[xx].task} upstream of ${reqs[tt].task}`).toBe(anc[tt].has(xx));
        }
    }
  });
});

describe('buildAncestry', () => {
  it('orders dependents after what they wait for, otherwise as declared', () => {
    const reqs = [
      task('late', { dependsOn: ['b', 'a'] })[0],
      task('b', { dependsOn: ['a'] })[0],
      task('free')[0],
      task('a')[0],
    ];
    expect(buildAncestry(reqs).order).toEqual([2, 3, 1, 0]);
  });

  it('chains sequential replicas by replica index, per backend', () => {
    const reqs = [
      task('s_1', { base: 's', policy: 'sequential', replicaIndex: 1 })[0],
      task('s_0', { base: 's', policy: 'sequential', replicaIndex: 0 })[0],
      task('s_2', { base: 's', policy: 'sequential', replicaIndex: 2 })[0],
      task('s_0c', { base: 's', backend: 'c', policy: 'sequential', replicaIndex: 0 })[0],
    ];
    const a = buildAncestry(reqs);
    expect(a.order).toEqual([1, 0, 2, 3]);
    expect(a.isAncestor(1, 2)).toBe(true);
    expect(a.isAncestor(0, 2)).toBe(true);
    expect(a.isAncestor(2, 1)).toBe(false);
    expect(a.isAncestor(1, 3)).toBe(false);
  });

  it('finds an ancestor among more than eight parents', () => {
    const ups = Array.from({ length: 10 }, (_, i) => task(`u${i}`)[0]);
    const reqs = [...ups, task('down', { dependsOn: ups.map((u) => u.task).reverse() })[0]];
    const a = buildAncestry(reqs);
    for (let i = 0; i < 10; i++) expect(a.isAncestor(i, 10)).toBe(true);
    expect(a.isAncestor(10, 0)).toBe(false);
  });

  it('keeps apart two parent lists that hash alike', () => {
    // [0, 40] and [1, 9] fold to the same hash (sorted, same length): their groups must not merge
    const base = Array.from({ length: 41 }, (_, i) => task(`t${i}`)[0]);
    const reqs = [
      ...base,
      task('x', { dependsOn: ['t0', 't40'] })[0],
      task('y', { dependsOn: ['t1', 't9'] })[0],
    ];
    const a = buildAncestry(reqs);
    const [x, y] = [41, 42];
    expect([a.isAncestor(0, x), a.isAncestor(40, x), a.isAncestor(1, x), a.isAncestor(9, x)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([a.isAncestor(0, y), a.isAncestor(40, y), a.isAncestor(1, y), a.isAncestor(9, y)]).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  it('refuses a task listed twice', () => {
    const e = fails(() => buildAncestry([task('x')[0], task('y')[0], task('x')[0]]));
    expect(e.code).toBe('PLACEMENT_DUPLICATE_TASK');
    expect(e.message).toBe("Task 'x' is listed twice");
    expect(e.task).toBe('x');
  });

  it('refuses an unknown dependency', () => {
    const e = fails(() => buildAncestry([task('x')[0], task('y', { dependsOn: ['x', 'ghost'] })[0]]));
    expect(e.code).toBe('PLACEMENT_UNKNOWN_DEPENDENCY');
    expect(e.message).toBe("Task 'y' depends on unknown task 'ghost'");
    expect(e.task).toBe('y');
  });

  it('names at most eight of the tasks a cycle holds back, in declaration order', () => {
    const ring = Array.from({ length: 10 }, (_, i) => task(`c${i}`, { dependsOn: [`c${(i + 9) % 10}`] })[0]);
    const e = fails(() => buildAncestry([task('free')[0], ...ring]));
    expect(e.code).toBe('PLACEMENT_DEPENDENCY_CYCLE');
    expect(e.message).toBe(
      "Tasks 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7' depend on each other in a cycle",
    );
    const small = fails(() =>
      buildAncestry([task('p', { dependsOn: ['q'] })[0], task('ok')[0], task('q', { dependsOn: ['p'] })[0]]),
    );
    expect(small.message).toBe("Tasks 'p', 'q' depend on each other in a cycle");
  });
});
