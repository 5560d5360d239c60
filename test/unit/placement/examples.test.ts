/** Worked examples E1–E12 of spec placement.md §9, each asserting the exact placement or error. */
import { describe, expect, it } from 'vitest';
import { K8S, board, caps, plan, planError, task, where } from './helpers.js';

describe('E1 single count on an empty board', () => {
  it('puts count 4 on n0 with 0,1,2,3', () => {
    const p = plan(board(4, 4), task('A', { gpus: { count: 4 } }));
    expect(where(p.A)).toEqual({ nodes: ['n0'], gpus: [0, 1, 2, 3] });
  });
});

describe('E2 indices back-fill', () => {
  it('scans from node 0 for every task', () => {
    const p = plan(
      board(4, 4),
      task('A', { gpus: { indices: [2, 3] } }),
      task('B', { gpus: { indices: [2, 3] } }),
      task('C', { gpus: { indices: [0, 1] } }),
    );
    expect(where(p.A)).toEqual({ nodes: ['n0'], gpus: [2, 3] });
    expect(where(p.B)).toEqual({ nodes: ['n1'], gpus: [2, 3] });
    expect(where(p.C)).toEqual({ nodes: ['n0'], gpus: [0, 1] });
  });
});

describe('E3 fan-out keeps the written order', () => {
  it('spans count/len(indices) nodes with the list on each', () => {
    const p = plan(board(4, 4), task('F', { gpus: { count: 8, indices: [1, 0] } }));
    expect(where(p.F)).toEqual({ nodes: ['n0', 'n1', 'n2', 'n3'], gpus: [1, 0] });
  });
  it('fails when n0 is already full (needs 4 nodes, found 3)', () => {
    const e = planError(
      board(4, 4),
      task('A', { gpus: { count: 4 } }),
      task('F', { gpus: { count: 8, indices: [1, 0] } }),
    );
    expect(e.phase).toBe('plan');
    expect(e.message).toContain("Task 'F' needs 4 node(s) with GPU(s) 1,0 idle, found 3 (n1, n2, n3)");
    expect(e.message).toContain('nodes scanned: n0, n1, n2, n3');
    expect(e.message).toContain("node 'n0' GPU 0-1: 'A'");
  });
});

describe('E4 divisibility on 2×8 with nodes.count 2', () => {
  const two = (count: number) => task('T', { nodes: { count: 2 }, gpus: { count } });
  it('rejects 1 and suggests 2', () => {
    const e = planError(board(2, 8), two(1));
    expect(e.message).toContain("Task 'T' requests 1 GPU(s) across 2 node(s)");
    expect(e.message).toContain("multiple of the task's node count (2)");
    expect(e.message).toContain('Use count 2.');
  });
  it('rejects 3 and suggests 2 or 4', () => {
    expect(planError(board(2, 8), two(3)).message).toContain('Use count 2 or 4.');
  });
  it('gives 4 as 0,1 on both nodes', () => {
    expect(where(plan(board(2, 8), two(4)).T)).toEqual({ nodes: ['n0', 'n1'], gpus: [0, 1] });
  });
  it('gives 16 as 0..7 on both nodes', () => {
    expect(where(plan(board(2, 8), two(16)).T)).toEqual({
      nodes: ['n0', 'n1'],
      gpus: [0, 1, 2, 3, 4, 5, 6, 7],
    });
  });
  it('rejects 18 (9 per node > 8)', () => {
    const e = planError(board(2, 8), two(18));
    expect(e.message).toContain(
      "Task 'T' requests 18 GPU(s) in total, but its 2 assigned node(s) have only 16",
    );
    expect(e.message).toContain("backend 'b': 2 node(s), gpus_per_node=8, total capacity 16");
    expect(e.message).toContain('Use count 16.');
  });
});

describe('E5 heterogeneous capacity (8, 2)', () => {
  it('rejects count 10 instead of silently giving 2+2', () => {
    const e = planError(caps([8, 2]), task('T', { nodes: { count: 2 }, gpus: { count: 10 } }));
    expect(e.message).toContain("5 per node, but node 'n1' has capacity 2");
    expect(e.message).toContain('Use count 4.');
  });
  it('accepts count 4 as 0,1 on each node', () => {
    const p = plan(caps([8, 2]), task('T', { nodes: { count: 2 }, gpus: { count: 4 } }));
    expect(where(p.T)).toEqual({ nodes: ['n0', 'n1'], gpus: [0, 1] });
  });
});

describe('E6 replica packing across tasks', () => {
  it('packs t1 replicas on n1 and t2 replicas on n2', () => {
    const p = plan(
      board(2, 4, ['n1', 'n2']),
      task('t1', { replicas: 2, gpus: { count: 2 } }),
      task('t2', { replicas: 4, gpus: { count: 1 } }),
    );
    expect(where(p.t1_0)).toEqual({ nodes: ['n1'], gpus: [0, 1] });
    expect(where(p.t1_1)).toEqual({ nodes: ['n1'], gpus: [2, 3] });
    expect([0, 1, 2, 3].map((i) => where(p[`t2_${i}`]))).toEqual(
      [0, 1, 2, 3].map((g) => ({ nodes: ['n2'], gpus: [g] })),
    );
  });
});

describe('E7 sharing the remainder of a node', () => {
  it('fills n1 then puts the 4-GPU task on n2', () => {
    const p = plan(
      board(2, 4, ['n1', 'n2']),
      task('t1', { gpus: { count: 2 } }),
      task('t2', { replicas: 2, gpus: { count: 1 } }),
      task('t3', { gpus: { count: 4 } }),
    );
    expect(where(p.t1)).toEqual({ nodes: ['n1'], gpus: [0, 1] });
    expect(where(p.t2_0)).toEqual({ nodes: ['n1'], gpus: [2] });
    expect(where(p.t2_1)).toEqual({ nodes: ['n1'], gpus: [3] });
    expect(where(p.t3)).toEqual({ nodes: ['n2'], gpus: [0, 1, 2, 3] });
  });
});

describe('E8 multi-node auto-expansion', () => {
  const nodes = board(3, 4, ['n1', 'n2', 'n3']);
  it('expands count 8 over two whole nodes', () => {
    const p = plan(
      nodes,
      task('prefill', { gpus: { count: 8 } }),
      task('decode', { replicas: 2, gpus: { count: 2 } }),
    );
    expect(where(p.prefill)).toEqual({ nodes: ['n1', 'n2'], gpus: [0, 1, 2, 3] });
    expect(where(p.decode_0)).toEqual({ nodes: ['n3'], gpus: [0, 1] });
    expect(where(p.decode_1)).toEqual({ nodes: ['n3'], gpus: [2, 3] });
  });
  it('rejects count 6 (not a multiple of 4)', () => {
    const e = planError(nodes, task('prefill', { gpus: { count: 6 } }));
    expect(e.message).toContain("Task 'prefill' requests 6 GPU(s)");
    expect(e.message).toContain('multiple of the per-node GPU capacity (4)');
    expect(e.hint).toContain('resources.nodes');
  });
  it('rejects count 8 on a 1×4 board (needs 2 nodes, pool has 1)', () => {
    const e = planError(board(1, 4), task('prefill', { gpus: { count: 8 } }));
    expect(e.message).toContain('requires 2 node(s)');
    expect(e.message).toContain('replica_index=0, policy=parallel');
    expect(e.message).toContain('has only 1 GPU node(s)');
  });
});

describe('E9 release at task completion', () => {
  const one = board(1, 4);
  it('lets a dependent reuse the GPUs of a probe-less producer', () => {
    const p = plan(
      one,
      task('A', { gpus: { count: 4 } }),
      task('B', { gpus: { count: 4 }, dependsOn: ['A'] }),
    );
    expect(where(p.B)).toEqual({ nodes: ['n0'], gpus: [0, 1, 2, 3] });
    expect(p.A.releaseAfter.gpus).toBe('task_completion');
  });
  it('fails for B when A holds until workflow completion', () => {
    const e = planError(
      one,
      task('A', { gpus: { count: 4, releaseAfter: 'workflow_completion' } }),
      task('B', { gpus: { count: 4 }, dependsOn: ['A'] }),
    );
    expect(e.message).toContain("Task 'B' requests 4 GPU(s) on node 'n0'");
    expect(e.message).toContain('only 0 GPU(s) remain available there (still needed 4)');
    expect(e.message).toContain("'A' (release_after=workflow_completion) holds them until the workflow ends");
  });
  it('fails for B when A is a service with an inferred policy', () => {
    const e = planError(
      one,
      task('A', { gpus: { count: 4 }, hasReadiness: true }),
      task('B', { gpus: { count: 4 }, dependsOn: ['A'] }),
    );
    expect(e.message).toContain('release_after=workflow_completion, inferred');
    expect(e.message).toContain('readiness probe');
  });
  it('fails for B when the tasks are independent', () => {
    const e = planError(one, task('A', { gpus: { count: 4 } }), task('B', { gpus: { count: 4 } }));
    expect(e.message).toContain("'A' (release_after=task_completion, inferred) may run at the same time");
  });
});

describe('E10 node selection on n1..n4', () => {
  const nodes = board(4, null, ['n1', 'n2', 'n3', 'n4']);
  const names = (spec: Parameters<typeof task>[1]) => where(plan(nodes, task('T', spec)).T).nodes;
  it.each([
    [{ indices: [1, 3] }, ['n2', 'n4']],
    [{ indices: [-1] }, ['n4']],
    [{ exclude: [0] }, ['n2', 'n3', 'n4']],
    [{ exclude: [0, 2] }, ['n2', 'n4']],
    [{ exclude: [0], count: 2 }, ['n2', 'n3']],
    [{ exclude: [0], indices: [0] }, ['n2']],
    [{ exclude: [3], indices: [-1] }, ['n3']],
  ])('nodes %j → %j', (spec, expected) => {
    expect(names({ nodes: spec })).toEqual(expected);
  });
  it('rejects exclude 5 naming the valid range', () => {
    const e = planError(nodes, task('T', { nodes: { exclude: [5] } }));
    expect(e.message).toContain('index(es) 5 out of range for 4 allocated node(s)');
    expect(e.message).toContain('valid: 0..3');
  });
  it('rejects indices together with count', () => {
    expect(planError(nodes, task('T', { nodes: { indices: [0], count: 1 } })).message).toContain(
      "cannot set both 'indices' and 'count'",
    );
  });
  it('slices parallel replicas and shares the first slice for sequential ones', () => {
    const par = plan(nodes, task('T', { replicas: 2, nodes: { count: 2 } }));
    expect([where(par.T_0).nodes, where(par.T_1).nodes]).toEqual([
      ['n1', 'n2'],
      ['n3', 'n4'],
    ]);
    const seq = plan(nodes, task('T', { replicas: 2, policy: 'sequential', nodes: { count: 2 } }));
    expect([where(seq.T_0).nodes, where(seq.T_1).nodes]).toEqual([
      ['n1', 'n2'],
      ['n1', 'n2'],
    ]);
  });
  it('rejects the second parallel replica of count 3', () => {
    const e = planError(nodes, task('T', { replicas: 2, nodes: { count: 3 } }));
    expect(e.message).toContain(
      "Task 'T_1' needs 3 node(s) (replica_index=1, policy=parallel): pool positions 3..5",
    );
    expect(e.message).toContain('has only 4 node(s)');
  });
  it('spans every node without resources', () => {
    expect(where(plan(nodes, task('T')).T)).toEqual({ nodes: ['n1', 'n2', 'n3', 'n4'], gpus: null });
  });
  it('rejects excluding the only node', () => {
    expect(planError(board(1, null, ['n1']), task('T', { nodes: { exclude: [0] } })).message).toContain(
      'removed all nodes',
    );
  });
  it('packs GPUs inside the post-exclude pool', () => {
    const p = plan(board(2, 4, ['n1', 'n2']), task('T', { nodes: { exclude: [0] }, gpus: { count: 2 } }));
    expect(where(p.T)).toEqual({ nodes: ['n2'], gpus: [0, 1] });
  });
});

describe('E11 explicit node + GPU count', () => {
  it('stacks tasks on the pinned node, then fails with the node facts', () => {
    const nodes = board(2, 8);
    const A = task('A', { nodes: { indices: [1] }, gpus: { count: 4 } });
    const B = task('B', { nodes: { indices: [1] }, gpus: { count: 4 } });
    const p = plan(nodes, A, B);
    expect(where(p.A)).toEqual({ nodes: ['n1'], gpus: [0, 1, 2, 3] });
    expect(where(p.B)).toEqual({ nodes: ['n1'], gpus: [4, 5, 6, 7] });
    const e = planError(nodes, A, B, task('C', { nodes: { indices: [1] }, gpus: { count: 1 } }));
    expect(e.message).toContain("Task 'C' requests 1 GPU(s) on node 'n1'");
    expect(e.message).toContain('only 0 GPU(s) remain available there');
    expect(e.message).toContain('node capacity 8, already allocated 8');
    expect(e.message).toContain(
      "backend 'b': 2 node(s), gpus_per_node=8, total capacity 16, allocated 8, remaining 8",
    );
    expect(e.hint).toContain('add nodes');
  });
});

describe('E12 validation of gpus.indices', () => {
  it.each([
    [[], 'is empty'],
    [[0, 0], 'lists 0 more than once'],
    [[-1], 'must be non-negative integers, got -1'],
  ])('rejects %j', (indices, text) => {
    const e = planError(board(1, 4), task('T', { gpus: { indices } }));
    expect(e.phase).toBe('plan');
    expect(e.message).toContain("Task 'T'");
    expect(e.message).toContain(text);
  });
  it('rejects indices on Kubernetes, pointing at count', () => {
    const e = planError(board(1, 4), task('T', { engine: K8S, gpus: { indices: [0] } }));
    expect(e.message).toContain('not supported on the Kubernetes backend');
    expect(e.hint).toContain('gpus.count');
  });
  it('accepts count on Kubernetes without slicing', () => {
    const p = plan(board(1, 4), task('T', { engine: K8S, gpus: { count: 2 } }));
    expect(p.T.gpus).toBeNull();
    expect(p.T.gpusPerNode).toBe(2);
    expect(p.T.gpuSlots).toEqual([0, 1]);
  });
});

describe('Kubernetes packing (the device plugin picks devices; the planner counts them)', () => {
  const k8s = (name: string, count: number, more: Parameters<typeof task>[1] = {}) =>
    task(name, { engine: K8S, gpus: { count }, ...more });
  it('puts two 4-GPU tasks of a 2-node x 4-GPU pool on different nodes', () => {
    const p = plan(board(2, 4), k8s('A', 4), k8s('B', 4));
    expect(p.A.nodes.map((n) => n.name)).toEqual(['n0']);
    expect(p.B.nodes.map((n) => n.name)).toEqual(['n1']);
    expect([p.A.gpus, p.B.gpus]).toEqual([null, null]);
  });
  it('packs unpinned tasks onto the lowest node with enough free GPUs', () => {
    const p = plan(board(2, 4), k8s('A', 3), k8s('B', 2), k8s('C', 1), k8s('D', 2));
    expect(['A', 'B', 'C', 'D'].map((t) => p[t].nodes[0].name)).toEqual(['n0', 'n1', 'n0', 'n1']);
    expect(p.C.gpuSlots).toEqual([3]);
  });
  it('makes over-subscription a plan error naming the task and the capacity', () => {
    const e = planError(board(2, 4), k8s('A', 4), k8s('B', 4), k8s('C', 1));
    expect(e.phase).toBe('plan');
    expect(e.message).toContain("Task 'C' requests 1 GPU(s)");
    expect(e.message).toContain('gpus_per_node=4, total capacity 8, allocated 8, remaining 0');
  });
  it('lets a dependent reuse the GPUs of a finished upstream task', () => {
    const p = plan(board(1, 4), k8s('A', 4), k8s('B', 4, { dependsOn: ['A'] }));
    expect(p.B.nodes[0].name).toBe('n0');
  });
  it('keeps a service (readiness probe) on its GPUs for the whole run', () => {
    const e = planError(board(1, 4), k8s('S', 4, { hasReadiness: true }), k8s('C', 1, { dependsOn: ['S'] }));
    expect(e.message).toContain("'S' (release_after=workflow_completion, inferred) holds them");
  });
  it('spreads a task larger than a node over whole free nodes', () => {
    const p = plan(board(3, 4), k8s('A', 2), k8s('B', 8));
    expect(p.B.nodes.map((n) => n.name)).toEqual(['n1', 'n2']);
    expect(p.B.gpusPerNode).toBe(4);
  });
  it('counts pinned tasks too: a pinned request on a full node is a conflict', () => {
    const e = planError(board(2, 4), k8s('A', 4), k8s('B', 1, { nodes: { indices: [0] } }));
    expect(e.message).toContain("Task 'B' requests 1 GPU(s) on node 'n0'");
  });
  it('without a known capacity (dry-run before the allocation reads allocatable) sizes by count only', () => {
    const p = plan(board(2, null), k8s('A', 4), k8s('B', 4));
    expect(p.A.nodes[0].name).toBe('n0');
    expect(p.B.nodes[0].name).toBe('n0');
    expect(p.B.gpuSlots).toBeUndefined();
  });
});
