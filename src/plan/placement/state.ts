/**
 * Per-backend occupancy while planning. Every GPU slot and every node remembers only its *latest*
 * owner: tasks are planned in topological order, and a task may take a slot only when every earlier
 * owner releases before it can start, so the latest owner dominates (anything compatible with it is
 * compatible with all earlier ones). That keeps each check O(1).
 */
import type { PlacementRequest, ReleaseAfter, TopologyNode } from './types.js';
import type { Ancestry } from './ancestry.js';

/** Release policies and the dependency structure, shared by all backends. */
export class Lifetimes {
  constructor(
    readonly requests: readonly PlacementRequest[],
    readonly ancestry: Ancestry,
    /** effective GPU policy per request (null: no GPUs) */
    readonly gpuPolicy: (ReleaseAfter | null)[],
    /** node policy per request (null: placement only) */
    readonly nodePolicy: (ReleaseAfter | null)[],
  ) {}

  /** X releases its GPUs before T can start */
  gpuFreedBefore(x: number, t: number): boolean {
    return releasesBefore(this.gpuPolicy[x], this.requests[x].hasReadiness) && this.ancestry.isAncestor(x, t);
  }

  nodeFreedBefore(x: number, t: number): boolean {
    return (
      releasesBefore(this.nodePolicy[x], this.requests[x].hasReadiness) && this.ancestry.isAncestor(x, t)
    );
  }

  /** why owner X keeps T off a resource (for error messages) */
  blockReason(kind: 'gpus' | 'nodes', x: number, t: number): string {
    const X = this.requests[x];
    const T = this.requests[t];
    const policy = (kind === 'gpus' ? this.gpuPolicy[x] : this.nodePolicy[x]) ?? 'workflow_completion';
    const explicit = kind === 'gpus' ? X.gpus?.releaseAfter !== undefined : true;
    const tag = `release_after=${policy}${explicit ? '' : ', inferred'}`;
    if (!this.ancestry.isAncestor(x, t)) {
      return `'${X.task}' (${tag}) may run at the same time: it is not an upstream dependency of '${T.task}'`;
    }
    if (policy === 'workflow_completion') {
      const why = explicit ? '' : ' because it has a readiness probe and may still be serving';
      return `'${X.task}' (${tag}) holds them until the workflow ends${why}`;
    }
    return `'${X.task}' (${tag}) has a readiness probe, so '${T.task}' may start while it still runs`;
  }
}

function releasesBefore(policy: ReleaseAfter | null, hasReadiness: boolean): boolean {
  if (policy === 'task_ready') return true;
  return policy === 'task_completion' && !hasReadiness;
}

export class BackendState<N extends TopologyNode = TopologyNode> {
  /** latest owner per GPU slot, -1 when never used; null for nodes of unknown capacity */
  readonly slots: (Int32Array | null)[];
  /** latest exclusive node owner, -1 when none */
  readonly nodeOwner: Int32Array;
  /** every allocation position, in order (the pool of a task without `exclude`) */
  readonly allPositions: readonly number[];
  /** positions of nodes with a known, positive GPU capacity */
  readonly gpuPositions: readonly number[];

  constructor(
    readonly name: string,
    readonly nodes: readonly N[],
    readonly life: Lifetimes,
  ) {
    this.slots = nodes.map((n) =>
      n.numGpus === null ? null : new Int32Array(Math.max(0, n.numGpus)).fill(-1),
    );
    this.nodeOwner = new Int32Array(nodes.length).fill(-1);
    this.allPositions = nodes.map((_, i) => i);
    this.gpuPositions = this.allPositions.filter((i) => (nodes[i].numGpus ?? 0) > 0);
  }

  /** pool positions whose GPU capacity is known and positive */
  gpuNodes(pool: readonly number[]): readonly number[] {
    return pool === this.allPositions ? this.gpuPositions : pool.filter((pos) => (this.cap(pos) ?? 0) > 0);
  }

  cap(pos: number): number | null {
    return this.nodes[pos].numGpus;
  }

  idle(pos: number, g: number, t: number): boolean {
    const owner = (this.slots[pos] as Int32Array)[g];
    return owner < 0 || this.life.gpuFreedBefore(owner, t);
  }

  allIdle(pos: number, gpus: readonly number[], t: number): boolean {
    for (const g of gpus) if (!this.idle(pos, g, t)) return false;
    return true;
  }

  /** lowest start of `count` contiguous idle slots at or after `from`, or -1 */
  firstRun(pos: number, count: number, t: number, from = 0): number {
    const cap = this.cap(pos) ?? 0;
    let run = 0;
    for (let g = from; g < cap; g++) {
      run = this.idle(pos, g, t) ? run + 1 : 0;
      if (run === count) return g - count + 1;
    }
    return -1;
  }

  /** slots of the node that T may not use */
  blocked(pos: number, t: number): number[] {
    const out: number[] = [];
    const cap = this.cap(pos) ?? 0;
    for (let g = 0; g < cap; g++) if (!this.idle(pos, g, t)) out.push(g);
    return out;
  }

  nodeBlocked(pos: number, t: number): boolean {
    const owner = this.nodeOwner[pos];
    return owner >= 0 && !this.life.nodeFreedBefore(owner, t);
  }

  reserveGpus(pos: number, gpus: readonly number[], t: number): void {
    const s = this.slots[pos];
    if (s) for (const g of gpus) s[g] = t;
  }

  /** "GPU 0-3 held by 'A' (...)" lines for the slots of a node that block T */
  describeBlockers(pos: number, t: number, only?: readonly number[]): string[] {
    const s = this.slots[pos];
    if (!s) return [];
    const byOwner = new Map<number, number[]>();
    for (const g of only ?? this.blocked(pos, t)) {
      if (this.idle(pos, g, t)) continue;
      const list = byOwner.get(s[g]) ?? [];
      list.push(g);
      byOwner.set(s[g], list);
    }
    return [...byOwner].map(
      ([owner, gs]) =>
        `node '${this.nodes[pos].name}' GPU ${ranges(gs)}: ${this.life.blockReason('gpus', owner, t)}`,
    );
  }

  /** backend summary relative to T (what T could still use) */
  summary(t: number): string {
    const known = this.nodes.flatMap((n, pos) => (n.numGpus === null ? [] : [{ pos, cap: n.numGpus }]));
    const caps = known.map(({ cap }) => cap);
    const total = caps.reduce((a, b) => a + b, 0);
    const allocated = known.reduce((a, { pos }) => a + this.blocked(pos, t).length, 0);
    const capText =
      caps.length > 0 && caps.every((c) => c === caps[0])
        ? `gpus_per_node=${caps[0]}`
        : `capacities=[${caps.join(', ')}]`;
    return (
      `backend '${this.name}': ${this.nodes.length} node(s), ${capText}, total capacity ${total}, ` +
      `allocated ${allocated}, remaining ${total - allocated}`
    );
  }
}

/** [0,1,2,5] → "0-2,5" */
export function ranges(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
