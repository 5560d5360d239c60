/**
 * GPU selection on nodes of known capacity (src/plan/placement/gpus.ts, placement.md §4.1): the
 * choices at the edges (nodes reserved whole, starts that differ between nodes, the exact pool
 * size) and every error, asserted whole: its code, its words, the task and field it names, the
 * hint. `E*` worked examples are in examples.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PlacementError } from '../../../src/plan/placement/errors.js';
import type { PlacementRequest } from '../../../src/plan/placement/types.js';
import { board, caps, plan, planError, task, where } from './helpers.js';

const HINT =
  'add nodes to the backend or reduce concurrent GPU requests; a task may reuse the GPUs of an upstream task ' +
  'that releases them (resources.gpus.release_after)';

/** a task pinned to node positions `nodes` holding GPUs `gpus` there for the whole run */
const holder = (name: string, nodes: number[], gpus: number[]): PlacementRequest[] =>
  task(name, { nodes: { indices: nodes }, gpus: { indices: gpus } });

const fail = (nodes: Parameters<typeof planError>[0], ...tasks: PlacementRequest[][]) =>
  planError(nodes, ...tasks) as PlacementError;

const firstLine = (e: Error) => e.message.split('\n')[0];

describe('pinned nodes', () => {
  it('wants count = len(indices) × nodes', () => {
    const e = fail(
      board(3, 8),
      task('P', { nodes: { indices: [0, 1] }, gpus: { count: 3, indices: [2, 3] } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_COUNT_MISMATCH');
    expect(e.message).toBe(
      "Task 'P' requests 3 GPU(s) with indices [2,3] on 2 pinned node(s): count must equal len(indices) × nodes = 4. Use count 4.",
    );
    expect(e.task).toBe('P');
  });

  it('refuses indices a pinned node does not have', () => {
    const e = fail(board(2, 4), task('P', { nodes: { indices: [1] }, gpus: { indices: [3, 4, 5] } }));
    expect(e.code).toBe('PLACEMENT_GPU_INDEX_CAPACITY');
    expect(e.message).toBe(
      "Task 'P' resources.gpus.indices 4,5 do not exist on node 'n1' (capacity 4, valid indices 0..3)",
    );
    expect([e.task, e.field]).toEqual(['P', 'gpus.indices']);
  });

  it('refuses indices another task holds there, naming it', () => {
    const e = fail(board(2, 4), holder('A', [1], [0, 1]), holder('B', [1], [1, 2]));
    expect(e.code).toBe('PLACEMENT_GPU_CONFLICT');
    const lines = e.message.split('\n');
    expect(lines[0]).toBe("Task 'B' requests GPU(s) 1,2 on node 'n1', but they are not free:");
    expect(lines[1]).toContain("'A'");
    expect(e.hint).toBe(HINT);
    expect(e.task).toBe('B');
  });

  it('finds the lowest start idle on every pinned node', () => {
    const p = plan(
      board(2, 4),
      holder('A', [0], [0]),
      task('C', { nodes: { indices: [0, 1] }, gpus: { count: 4 } }),
    );
    expect(where(p.C)).toEqual({ nodes: ['n0', 'n1'], gpus: [1, 2] });
  });

  it('says when the pinned nodes are free at different places', () => {
    const e = fail(
      board(2, 4),
      holder('A', [0], [0, 1]),
      holder('B', [1], [2, 3]),
      task('C', { nodes: { indices: [0, 1] }, gpus: { count: 4 } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_NODE_STATES');
    expect(e.message).toBe(
      "Task 'C' needs the same 2 GPU index(es) idle on each of its 2 node(s), but the nodes are in different " +
        'occupancy states (first idle run of 2: n0 at 2, n1 at 0)',
    );
    expect(e.hint).toBe(
      'pin nodes whose free GPUs line up (resources.nodes.indices), or change the order of the GPU tasks',
    );
    expect(e.task).toBe('C');
  });

  it('says which pinned node is full, with the share per node', () => {
    const e = fail(
      board(2, 4),
      holder('A', [0], [0, 1, 2]),
      task('C', { nodes: { indices: [0, 1] }, gpus: { count: 4 } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_NO_FIT');
    expect(firstLine(e)).toBe(
      "Task 'C' requests 4 GPU(s) (2 per node) on node 'n0', but only 1 GPU(s) remain available there " +
        '(still needed 1); node capacity 4, already allocated 3.',
    );
    expect(e.hint).toBe(HINT);
    expect(e.task).toBe('C');
  });
});

describe('a count on one node', () => {
  it('skips a node reserved whole by a task running beside it', () => {
    const p = plan(
      board(2, 4),
      task('R', { nodes: { count: 1, releaseAfter: 'workflow_completion' } }),
      task('G', { gpus: { count: 2 } }),
    );
    expect(where(p.R).nodes).toEqual(['n0']);
    expect(where(p.G)).toEqual({ nodes: ['n1'], gpus: [0, 1] });
  });

  it('skips nodes too small for the count', () => {
    const p = plan(caps([2, 4]), task('G', { gpus: { count: 3 } }));
    expect(where(p.G)).toEqual({ nodes: ['n1'], gpus: [0, 1, 2] });
  });

  it('on a one-node pool says how many GPUs are short', () => {
    const e = fail(board(1, 4), task('A', { gpus: { count: 3 } }), task('B', { gpus: { count: 2 } }));
    expect(e.code).toBe('PLACEMENT_GPU_NO_FIT');
    expect(firstLine(e)).toBe(
      "Task 'B' requests 2 GPU(s) on node 'n0', but only 1 GPU(s) remain available there (still needed 1); " +
        'node capacity 4, already allocated 3.',
    );
    expect(e.task).toBe('B');
  });

  it('on a one-node pool says when enough GPUs are idle but not side by side', () => {
    const e = fail(board(1, 4), holder('A', [0], [1]), task('B', { gpus: { count: 3 } }));
    expect(firstLine(e)).toBe(
      "Task 'B' requests 3 GPU(s) on node 'n0', but 3 GPU(s) remain available there but not as a contiguous " +
        'run of 3; node capacity 4, already allocated 1.',
    );
  });

  it('lists at most eight nodes of a larger pool, then how many more', () => {
    const holders = Array.from({ length: 10 }, (_, i) => holder(`h${i}`, [i], [0]));
    const e = fail(board(10, 1), ...holders, task('X', { gpus: { count: 1 } }));
    expect(e.code).toBe('PLACEMENT_GPU_NO_FIT');
    const lines = e.message.split('\n');
    expect(lines[0]).toBe(
      "Task 'X' requests 1 GPU(s), but no node of backend 'b' has 1 contiguous idle GPU(s).",
    );
    expect(lines.filter((l) => / {2}node 'n\d': /.test(l))).toHaveLength(8);
    expect(lines).toContain("  node 'n0': 0 of 1 GPU(s) remaining (already allocated 1)");
    expect(lines).toContain('  … and 2 more node(s)');
    expect(e.hint).toBe(HINT);
    // eight nodes: every one listed, no "more" line
    const eight = fail(board(8, 1), ...holders.slice(0, 8), task('X', { gpus: { count: 1 } }));
    expect(eight.message).not.toContain('more node(s)');
    expect(eight.message.split('\n').filter((l) => / {2}node 'n\d': /.test(l))).toHaveLength(8);
  });
});

describe('indices without pinned nodes', () => {
  it('refuses indices past the largest node', () => {
    const e = fail(caps([2, 4]), task('I', { gpus: { indices: [3, 4, 5] } }));
    expect(e.code).toBe('PLACEMENT_GPU_INDEX_CAPACITY');
    expect(e.message).toBe(
      "Task 'I' resources.gpus.indices 4,5 exceed the GPU capacity of backend 'b' (largest node has 4 GPU(s), " +
        'valid indices 0..3)',
    );
    expect([e.task, e.field]).toEqual(['I', 'gpus.indices']);
  });

  it('refuses a count that is not a multiple of the indices', () => {
    const e = fail(board(8, 4), task('M', { gpus: { count: 7, indices: [0, 1] } }));
    expect(e.code).toBe('PLACEMENT_GPU_FANOUT_MULTIPLE');
    expect(e.message).toBe(
      "Task 'M' requests 7 GPU(s) with indices [0,1]: count must be a positive multiple of len(indices) = 2. Use count 8.",
    );
    expect(e.task).toBe('M');
    expect(fail(board(8, 4), task('M', { gpus: { count: 1, indices: [0, 1, 2] } })).message).toContain(
      'Use count 3.',
    );
  });

  it('refuses a fan-out over more GPU nodes than the pool has; exactly as many is fine', () => {
    const e = fail(board(2, 4), task('F', { gpus: { count: 6, indices: [0, 1] }, replicaIndex: 0 }));
    expect(e.code).toBe('PLACEMENT_GPU_FANOUT_POOL');
    expect(e.message).toBe(
      "Task 'F' requests 6 GPU(s) as 2 per node on 3 node(s) (replica_index=0, policy=parallel), but the pool " +
        "of backend 'b' has only 2 GPU node(s)",
    );
    expect(e.task).toBe('F');
    expect(where(plan(board(2, 4), task('F', { gpus: { count: 4, indices: [0, 1] } })).F).nodes).toEqual([
      'n0',
      'n1',
    ]);
  });

  it('says none was found, and lists every blocking task', () => {
    const holders = Array.from({ length: 10 }, (_, i) => holder(`h${i}`, [i], [0]));
    const e = fail(board(10, 2), ...holders, task('X', { gpus: { indices: [0] } }));
    expect(e.code).toBe('PLACEMENT_GPU_INDICES_UNAVAILABLE');
    const lines = e.message.split('\n');
    expect(lines[0]).toBe(
      "Task 'X' needs 1 node(s) with GPU(s) 0 idle, found 0; nodes scanned: n0, n1, n2, n3, n4, n5, n6, n7, n8, n9",
    );
    for (let i = 0; i < 10; i++) expect(e.message).toContain(`'h${i}'`);
    expect(e.hint).toBe(HINT);
    expect(e.task).toBe('X');
  });
});

describe('a count larger than one node', () => {
  it('refuses a count that whole nodes cannot make, suggesting the two nearest', () => {
    const e = fail(board(4, 4), task('E', { gpus: { count: 10 } }));
    expect(e.code).toBe('PLACEMENT_GPU_EXPAND_MULTIPLE');
    expect(e.message).toBe(
      "Task 'E' requests 10 GPU(s), more than one node holds; automatic multi-node expansion requires gpus.count " +
        'to be a multiple of the per-node GPU capacity (4). Use count 8 or 12.',
    );
    expect(e.hint).toBe('set resources.nodes.count (or indices) explicitly to choose the nodes');
    expect(e.task).toBe('E');
    expect(fail(board(4, 4), task('E', { gpus: { count: 6 } })).message).toContain('Use count 4 or 8.');
  });

  it('refuses any count on a backend without GPUs, with no suggestion', () => {
    const e = fail(board(2, 0), task('E', { gpus: { count: 1 } }));
    expect(e.code).toBe('PLACEMENT_GPU_EXPAND_MULTIPLE');
    expect(e.message).toBe(
      "Task 'E' requests 1 GPU(s), more than one node holds; automatic multi-node expansion requires gpus.count " +
        'to be a multiple of the per-node GPU capacity (0)',
    );
  });

  it('sizes the spread by the smallest node', () => {
    const p = plan(caps([8, 4, 8]), task('E', { gpus: { count: 12 } }));
    expect(where(p.E)).toEqual({ nodes: ['n0', 'n1', 'n2'], gpus: [0, 1, 2, 3] });
  });

  it('refuses a spread over more nodes than the pool has; exactly as many is fine', () => {
    const e = fail(board(2, 4), task('E', { gpus: { count: 12 } }));
    expect(e.code).toBe('PLACEMENT_GPU_EXPAND_POOL');
    expect(e.message).toBe(
      "Task 'E' requests 12 GPU(s) which requires 3 node(s) of 4 GPU(s) (replica_index=0, policy=parallel), but " +
        "the pool of backend 'b' has only 2 GPU node(s)",
    );
    expect(e.hint).toBe('add nodes to the backend or lower gpus.count');
    expect(e.task).toBe('E');
    expect(where(plan(board(2, 4), task('E', { gpus: { count: 8 } })).E)).toEqual({
      nodes: ['n0', 'n1'],
      gpus: [0, 1, 2, 3],
    });
  });

  it('takes the lowest start that enough nodes share', () => {
    const p = plan(
      caps([4, 8, 8, 8, 8, 8, 8]),
      task('full', { nodes: { indices: [0] }, gpus: { count: 4 } }),
      holder('h1', [1], [0, 1, 2, 3]),
      holder('h2', [2], [0, 1, 2, 3]),
      holder('h3', [3], [0, 1, 2, 3]),
      task('E', { gpus: { count: 12 } }),
    );
    // n1-n3 are free from GPU 4, n4-n6 from GPU 0: both groups are large enough
    expect(where(p.E)).toEqual({ nodes: ['n4', 'n5', 'n6'], gpus: [0, 1, 2, 3] });
  });

  it('skips reserved nodes and nodes without a free run', () => {
    const p = plan(
      board(4, 4),
      task('R', { nodes: { indices: [1], releaseAfter: 'workflow_completion' } }),
      holder('h', [0], [0]),
      task('E', { gpus: { count: 8 } }),
    );
    expect(where(p.E)).toEqual({ nodes: ['n2', 'n3'], gpus: [0, 1, 2, 3] });
  });

  it('says when enough nodes are free but at different places', () => {
    const e = fail(
      caps([4, 8, 8, 8]),
      task('full', { nodes: { indices: [0] }, gpus: { count: 4 } }),
      holder('h1', [1], [0, 1, 2, 3]),
      task('E', { gpus: { count: 12 } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_NODE_STATES');
    expect(e.message).toBe(
      "Task 'E' needs 3 node(s) with the same 4 GPU index(es) idle, but the candidate nodes are in different " +
        'occupancy states (n1 free from GPU 4; n2, n3 free from GPU 0)',
    );
    expect(e.hint).toBe('pin nodes explicitly with resources.nodes.indices');
    expect(e.task).toBe('E');
  });

  it('says no node fits when too few have a free run', () => {
    const e = fail(board(2, 4), holder('h', [0], [0]), task('E', { gpus: { count: 8 } }));
    expect(e.code).toBe('PLACEMENT_GPU_NO_FIT');
    expect(firstLine(e)).toBe(
      "Task 'E' requests 8 GPU(s), but no node of backend 'b' has 2 node(s) with 4 idle GPU(s) each.",
    );
  });
});
