/**
 * GPU requests the planner cannot pack (src/plan/placement/gpu-unchecked.ts, spec placement.md
 * §4.4): nodes of unknown capacity get GPUs by replica offset with a warning; an engine that
 * assigns devices itself (Kubernetes) gets the first pool node(s) sized by the count. Through the
 * planner where it reaches them, and the engine-assigned rule directly for the capacities the
 * planner only passes it on a later allocation.
 */
import { describe, expect, it } from 'vitest';
import { placeEngineAssigned } from '../../../src/plan/placement/gpu-unchecked.js';
import { BackendState, type Lifetimes } from '../../../src/plan/placement/state.js';
import type { PlacementError } from '../../../src/plan/placement/errors.js';
import type { PlacementRequest } from '../../../src/plan/placement/types.js';
import { K8S, board, caps, fails, plan, planError, task, where } from './helpers.js';

const warning = (t: string) =>
  `Backend 'b' does not declare gpus_per_node, so the GPUs of task '${t}' were assigned by replica offset ` +
  'without packing or conflict checks; set gpus_per_node on the backend to enable them';

describe('unknown capacity: a count', () => {
  it('slices by replica index on the first node, with a warning each', () => {
    const p = plan(board(3, null), task('A', { gpus: { count: 2 }, replicas: 3 }));
    expect(where(p.A_0)).toEqual({ nodes: ['n0'], gpus: [0, 1] });
    expect(where(p.A_1)).toEqual({ nodes: ['n0'], gpus: [2, 3] });
    expect(where(p.A_2)).toEqual({ nodes: ['n0'], gpus: [4, 5] });
    expect(p.A_2.gpusPerNode).toBe(2);
    expect(p.A_1.warnings).toEqual([warning('A_1')]);
  });

  it('divides the count over pinned nodes', () => {
    const p = plan(
      board(3, null),
      task('P', { nodes: { indices: [1, 2] }, gpus: { count: 4 }, replicas: 2 }),
    );
    expect(where(p.P_0)).toEqual({ nodes: ['n1', 'n2'], gpus: [0, 1] });
    expect(where(p.P_1)).toEqual({ nodes: ['n1', 'n2'], gpus: [2, 3] });
    expect(p.P_1.gpusPerNode).toBe(2);
  });
});

describe('unknown capacity: indices', () => {
  it('puts indices alone on the first node, as written', () => {
    const p = plan(board(2, null), task('I', { gpus: { indices: [3, 1] } }));
    expect(where(p.I)).toEqual({ nodes: ['n0'], gpus: [3, 1] });
    expect(p.I.gpusPerNode).toBe(2);
    expect(p.I.warnings).toEqual([warning('I')]);
  });

  it('fans a count out over count / len(indices) nodes from the front of the pool', () => {
    const p = plan(board(3, null), task('F', { gpus: { count: 4, indices: [0, 1] } }));
    expect(where(p.F)).toEqual({ nodes: ['n0', 'n1'], gpus: [0, 1] });
    // exactly the pool's size is enough
    const q = plan(board(2, null), task('G', { gpus: { count: 4, indices: [0, 1] } }));
    expect(where(q.G)).toEqual({ nodes: ['n0', 'n1'], gpus: [0, 1] });
  });

  it('refuses a fan-out larger than the pool, naming the need and the pool', () => {
    const e = planError(board(2, null), task('F', { gpus: { count: 6, indices: [0, 1] } }));
    expect(e.code).toBe('PLACEMENT_GPU_FANOUT_POOL');
    expect(e.message).toBe(
      "Task 'F' with 6 GPU(s) requires 3 node(s) (replica_index=0, policy=parallel), but the pool of " +
        "backend 'b' has only 2 node(s)",
    );
    expect((e as PlacementError).task).toBe('F');
  });

  it('refuses a count that is not a multiple of the indices, suggesting the nearest', () => {
    const e = planError(board(8, null), task('M', { gpus: { count: 7, indices: [0, 1] } }));
    expect(e.code).toBe('PLACEMENT_GPU_FANOUT_MULTIPLE');
    expect(e.message).toBe(
      "Task 'M' requests 7 GPU(s) with 2 indices: count must be a positive multiple of len(indices) = 2. Use count 8.",
    );
    expect((e as PlacementError).task).toBe('M');
    // never below one node's worth
    expect(
      planError(board(8, null), task('M', { gpus: { count: 1, indices: [0, 1, 2] } })).message,
    ).toContain('Use count 3.');
  });

  it('on pinned nodes, wants count = len(indices) × nodes', () => {
    const ok = plan(
      board(3, null),
      task('P', { nodes: { indices: [0, 2] }, gpus: { count: 4, indices: [1, 0] } }),
    );
    expect(where(ok.P)).toEqual({ nodes: ['n0', 'n2'], gpus: [1, 0] });
    const bare = plan(board(3, null), task('Q', { nodes: { indices: [0, 2] }, gpus: { indices: [1, 0] } }));
    expect(where(bare.Q)).toEqual({ nodes: ['n0', 'n2'], gpus: [1, 0] });
    const e = planError(
      board(3, null),
      task('P', { nodes: { indices: [0, 2] }, gpus: { count: 3, indices: [1, 0] } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_COUNT_MISMATCH');
    expect(e.message).toBe(
      "Task 'P' requests 3 GPU(s) with 2 indices on 2 pinned node(s): count must equal len(indices) × nodes = 4. " +
        'Use count 4.',
    );
    expect((e as PlacementError).task).toBe('P');
  });
});

describe('engine-assigned devices (Kubernetes), capacity unknown', () => {
  it('takes the first pool node for a count, with no device list and no warning of its own', () => {
    const p = plan(board(3, null), task('K', { engine: K8S, gpus: { count: 3 } }));
    expect(where(p.K)).toEqual({ nodes: ['n0'], gpus: null });
    expect(p.K.gpusPerNode).toBe(3);
    expect(p.K.warnings.filter((w) => w.includes('gpus_per_node'))).toEqual([]);
  });
});

describe('placeEngineAssigned', () => {
  const req = (count: number): PlacementRequest => task('K', { engine: K8S, gpus: { count } })[0];
  const state = (list: (number | null)[]) => new BackendState('b', caps(list), null as unknown as Lifetimes);

  it('spreads a count above the largest node over count / smallest-capacity nodes', () => {
    const st = state([8, 8, 4]);
    expect(placeEngineAssigned(req(12), { count: 12 }, st, [0, 1, 2], null)).toEqual({
      nodes: [0, 1, 2],
      gpus: null,
      perNode: 4,
      warnings: [],
    });
    // what one node holds stays on one node
    expect(placeEngineAssigned(req(8), { count: 8 }, st, [0, 1, 2], null).nodes).toEqual([0]);
  });

  it('ignores nodes without GPUs when sizing the spread', () => {
    const st = state([0, 4, null, 4]);
    expect(placeEngineAssigned(req(8), { count: 8 }, st, [1, 3, 0], null).nodes).toEqual([1, 3]);
  });

  it('refuses a count above one node that is not a multiple of the per-node capacity', () => {
    const e = fails(() => placeEngineAssigned(req(10), { count: 10 }, state([8, 8, 4]), [0, 1, 2], null));
    expect(e.code).toBe('PLACEMENT_GPU_EXPAND_MULTIPLE');
    expect(e.message).toBe(
      "Task 'K' requests 10 GPU(s), more than one node holds; automatic multi-node expansion requires " +
        'gpus.count to be a multiple of the per-node GPU capacity (4)',
    );
    expect(e.hint).toBe('set resources.nodes.count explicitly');
    expect(e.task).toBe('K');
  });

  it('refuses a spread larger than the pool', () => {
    const e = fails(() => placeEngineAssigned(req(16), { count: 16 }, state([8, 8, 4]), [0, 1, 2], null));
    expect(e.code).toBe('PLACEMENT_GPU_FANOUT_POOL');
    expect(e.message).toBe(
      "Task 'K' requesting 16 GPU(s) requires 4 node(s) (replica_index=0, policy=parallel), but the pool of " +
        "backend 'b' has only 3 node(s)",
    );
  });

  it('on pinned nodes checks the share only when every capacity is known', () => {
    // one pinned node of unknown capacity: nothing to check against
    expect(placeEngineAssigned(req(6), { count: 6 }, state([2, null]), [0, 1], [0, 1]).perNode).toBe(3);
    const e = fails(() => placeEngineAssigned(req(6), { count: 6 }, state([2, 2]), [0, 1], [0, 1]));
    expect(e.code).toBe('PLACEMENT_GPU_TOTAL_EXCEEDS');
  });

  it('suggests counts up to the smallest pinned capacity', () => {
    const e = fails(() => placeEngineAssigned(req(5), { count: 5 }, state([8, 2]), [0, 1], [0, 1]));
    expect(e.code).toBe('PLACEMENT_GPU_COUNT_NOT_DIVISIBLE');
    expect(e.message).toContain('Use count 4.');
  });
});
