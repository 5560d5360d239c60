/**
 * Node selection (src/plan/placement/nodes.ts, placement.md §3 and §5.1): `exclude`, `indices`
 * (negative ones from the end), a `count` slice per replica, exclusive reservations, and every
 * node error asserted whole: code, words, the task and field it names, the hint.
 */
import { describe, expect, it } from 'vitest';
import type { PlacementError } from '../../../src/plan/placement/errors.js';
import type { PlacementRequest } from '../../../src/plan/placement/types.js';
import { board, plan, planError, task, where } from './helpers.js';

const fail = (nodes: Parameters<typeof planError>[0], ...tasks: PlacementRequest[][]) =>
  planError(nodes, ...tasks) as PlacementError;
const nodesOf = (p: ReturnType<typeof plan>, t: string) => where(p[t]).nodes;

/** a task reserving the nodes at pool `indices` until the workflow ends */
const reserver = (name: string, indices: number[]) =>
  task(name, { nodes: { indices, releaseAfter: 'workflow_completion' } });

describe('exclude', () => {
  it('drops allocation indices, negative ones counted from the end', () => {
    const p = plan(board(4, 0), task('A', { nodes: { exclude: [0, -1], indices: [0, 1] } }));
    expect(nodesOf(p, 'A')).toEqual(['n1', 'n2']);
    const q = plan(board(4, 0), task('B', { nodes: { exclude: [] } }));
    expect(nodesOf(q, 'B')).toEqual(['n0', 'n1', 'n2', 'n3']);
  });

  it('refuses indices outside the allocation, listing them', () => {
    const e = fail(board(3, 0), task('A', { nodes: { exclude: [1, 3, -4, -3, 2.5] } }));
    expect(e.code).toBe('PLACEMENT_NODE_EXCLUDE_RANGE');
    expect(e.message).toBe(
      "Task 'A' resources.nodes.exclude contains index(es) 3, -4, 2.5 out of range for 3 allocated node(s) of " +
        "backend 'b' (valid: 0..2, or -3..-1 counted from the end)",
    );
    expect([e.task, e.field]).toEqual(['A', 'nodes.exclude']);
  });

  it('refuses an exclude that leaves no node', () => {
    const e = fail(board(2, 0), task('A', { nodes: { exclude: [0, -1] } }));
    expect(e.code).toBe('PLACEMENT_NODE_EXCLUDE_EMPTY');
    expect(e.message).toBe(
      "Task 'A' resources.nodes.exclude removed all nodes from the pool of backend 'b' (2 allocated node(s))",
    );
    expect([e.task, e.field]).toEqual(['A', 'nodes.exclude']);
  });
});

describe('indices', () => {
  it('pins pool positions in the order written, negative ones from the end', () => {
    const p = plan(board(4, 0), task('A', { nodes: { indices: [-1, 0, -3] } }));
    expect(nodesOf(p, 'A')).toEqual(['n3', 'n0', 'n1']);
  });

  it('refuses both indices and count', () => {
    const e = fail(board(2, 0), task('A', { nodes: { indices: [0], count: 1 } }));
    expect(e.code).toBe('PLACEMENT_NODE_INDICES_AND_COUNT');
    expect(e.message).toBe("Task 'A' resources.nodes cannot set both 'indices' and 'count'");
    expect(e.hint).toBe('keep one of them: indices pins exact nodes, count takes a slice of the pool');
    expect([e.task, e.field]).toEqual(['A', 'nodes']);
  });

  it('refuses an empty list', () => {
    const e = fail(board(2, 0), task('A', { nodes: { indices: [] } }));
    expect(e.code).toBe('PLACEMENT_NODE_INDICES_EMPTY');
    expect(e.message).toBe("Task 'A' resources.nodes.indices is empty");
    expect([e.task, e.field]).toEqual(['A', 'nodes.indices']);
  });

  it.each([[3], [-4], [1.5]])('refuses %s on a pool of three after exclude', (idx) => {
    const e = fail(board(4, 0), task('A', { nodes: { exclude: [0], indices: [0, idx] } }));
    expect(e.code).toBe('PLACEMENT_NODE_INDEX_RANGE');
    expect(e.message).toBe(
      `Task 'A' resources.nodes.indices contains out-of-range index ${idx}; the node pool of backend 'b' has 3 ` +
        'node(s) after exclude (valid: 0..2, or -3..-1)',
    );
    expect([e.task, e.field]).toEqual(['A', 'nodes.indices']);
  });

  it('takes the two ends of the range', () => {
    expect(nodesOf(plan(board(3, 0), task('A', { nodes: { indices: [-3, 2] } })), 'A')).toEqual(['n0', 'n2']);
  });

  it('refuses one node named twice, however spelled', () => {
    const e = fail(board(3, 0), task('A', { nodes: { indices: [2, 0, -1] } }));
    expect(e.code).toBe('PLACEMENT_NODE_INDEX_DUPLICATE');
    expect(e.message).toBe("Task 'A' resources.nodes.indices names node 'n2' twice (index -1)");
    expect([e.task, e.field]).toEqual(['A', 'nodes.indices']);
  });

  it('refuses a node another task reserves while it may run', () => {
    const e = fail(board(3, 0), reserver('R', [1]), task('A', { nodes: { indices: [1] } }));
    expect(e.code).toBe('PLACEMENT_NODE_RESERVED');
    expect(e.message).toBe(
      "Task 'A' pins node 'n1', but it is reserved by task 'R': 'R' (release_after=workflow_completion) may run " +
        "at the same time: it is not an upstream dependency of 'A'",
    );
    expect(e.hint).toBe('pin another node, or make the tasks depend on each other');
    expect(e.task).toBe('A');
    // a dependent of a task that frees the node at its completion may have it
    const ok = plan(
      board(3, 0),
      task('R', { nodes: { indices: [1], releaseAfter: 'task_completion' } }),
      task('A', { nodes: { indices: [1] }, dependsOn: ['R'] }),
    );
    expect(nodesOf(ok, 'A')).toEqual(['n1']);
  });
});

describe('count', () => {
  it('gives each parallel replica its own slice, sequential replicas the first', () => {
    const p = plan(
      board(6, 0),
      task('P', { nodes: { count: 2 }, replicas: 3 }),
      task('S', { nodes: { count: 2 }, replicas: 2, policy: 'sequential' }),
    );
    expect(nodesOf(p, 'P_0')).toEqual(['n0', 'n1']);
    expect(nodesOf(p, 'P_2')).toEqual(['n4', 'n5']);
    expect(nodesOf(p, 'S_1')).toEqual(['n0', 'n1']);
  });

  it.each([0, -1, 1.5])('refuses %s', (count) => {
    const e = fail(board(2, 0), task('A', { nodes: { count } }));
    expect(e.code).toBe('PLACEMENT_NODE_COUNT');
    expect(e.message).toBe(`Task 'A' resources.nodes.count must be an integer > 0, got ${count}`);
    expect([e.task, e.field]).toEqual(['A', 'nodes.count']);
  });

  it('refuses a slice past the end of the pool', () => {
    const e = fail(board(3, 0), task('P', { nodes: { count: 2 }, replicas: 2 }));
    expect(e.code).toBe('PLACEMENT_NODE_COUNT_OVERFLOW');
    expect(e.message).toBe(
      "Task 'P_1' needs 2 node(s) (replica_index=1, policy=parallel): pool positions 2..3, but the node pool of " +
        "backend 'b' has only 3 node(s)",
    );
    expect(e.hint).toBe('add nodes to the backend, lower resources.nodes.count, or use policy sequential');
    expect(e.task).toBe('P_1');
  });

  it('takes the first free nodes when it reserves, or when others are reserved', () => {
    const p = plan(
      board(4, 0),
      reserver('R', [0]),
      task('X', { nodes: { count: 2, releaseAfter: 'workflow_completion' } }),
      task('Y', { nodes: { count: 1 } }),
    );
    expect(nodesOf(p, 'X')).toEqual(['n1', 'n2']);
    expect(nodesOf(p, 'Y')).toEqual(['n3']);
  });

  it('names the reservations when too few nodes are free', () => {
    const e = fail(board(3, 0), reserver('R', [0, 2]), task('X', { nodes: { count: 2 } }));
    expect(e.code).toBe('PLACEMENT_NODE_COUNT_UNAVAILABLE');
    expect(e.message).toBe(
      "Task 'X' needs 2 node(s) (replica_index=0, policy=parallel), but only 1 of the 3 node(s) in the pool of " +
        "backend 'b' are not reserved:\n" +
        "  node 'n0': 'R' (release_after=workflow_completion) may run at the same time: it is not an upstream dependency of 'X'\n" +
        "  node 'n2': 'R' (release_after=workflow_completion) may run at the same time: it is not an upstream dependency of 'X'",
    );
    expect(e.task).toBe('X');
  });
});

describe('a task without a node pin', () => {
  it('spans the pool; with a nodes block it refuses a reserved node', () => {
    const p = plan(board(3, 0), reserver('R', [1]), task('free'));
    expect(nodesOf(p, 'free')).toEqual(['n0', 'n1', 'n2']);
    const e = fail(board(3, 0), reserver('R', [1]), task('A', { nodes: { exclude: [0] } }));
    expect(e.code).toBe('PLACEMENT_NODE_RESERVED');
    expect(e.message).toBe(
      "Task 'A' spans every pool node, but node 'n1' is reserved by task 'R': 'R' " +
        "(release_after=workflow_completion) may run at the same time: it is not an upstream dependency of 'A'",
    );
    expect(e.hint).toBe('pin nodes with resources.nodes.indices or count, or exclude the reserved node');
    expect(e.task).toBe('A');
    expect(
      nodesOf(plan(board(3, 0), reserver('R', [1]), task('B', { nodes: { exclude: [1] } })), 'B'),
    ).toEqual(['n0', 'n2']);
  });
});
