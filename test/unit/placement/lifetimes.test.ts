/** release_after inference and time-compatibility (placement.md §5), node reservations (§5.1). */
import { describe, expect, it } from 'vitest';
import { K8S, board, plan, planError, task, where } from './helpers.js';

describe('GPU reuse over time', () => {
  it('lets a dependent take over a service that releases at task_ready', () => {
    const p = plan(
      board(1, 4),
      task('server', { hasReadiness: true, gpus: { count: 4, releaseAfter: 'task_ready' } }),
      task('client', { gpus: { count: 4 }, dependsOn: ['server'] }),
    );
    expect(where(p.client)).toEqual({ nodes: ['n0'], gpus: [0, 1, 2, 3] });
    expect(p.server.releaseAfter.gpus).toBe('task_ready');
  });

  it('does not treat task_completion of a service as freed at READY', () => {
    const e = planError(
      board(1, 4),
      task('server', { hasReadiness: true, gpus: { count: 4, releaseAfter: 'task_completion' } }),
      task('client', { gpus: { count: 4 }, dependsOn: ['server'] }),
    );
    expect(e.message).toContain("'server' (release_after=task_completion) has a readiness probe");
  });

  it('lets sequential probe-less replicas reuse each other’s GPUs, but not parallel ones', () => {
    const seq = plan(board(1, 4), task('T', { replicas: 3, policy: 'sequential', gpus: { count: 4 } }));
    expect(['T_0', 'T_1', 'T_2'].map((t) => seq[t].gpus)).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
    expect(planError(board(1, 4), task('T', { replicas: 2, gpus: { count: 4 } })).message).toContain(
      "Task 'T_1'",
    );
  });

  it('follows transitive dependencies and keeps concurrent tasks apart', () => {
    const p = plan(
      board(1, 8),
      task('A', { gpus: { count: 4 } }),
      task('X', { gpus: { count: 4 } }),
      task('B', { gpus: { count: 4 }, dependsOn: ['A'] }),
      task('C', { gpus: { count: 4 }, dependsOn: ['B'] }),
    );
    expect([p.A.gpus, p.X.gpus, p.B.gpus, p.C.gpus]).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
  });

  it('plans an upstream task first even when it is declared later', () => {
    const p = plan(
      board(1, 4),
      task('B', { gpus: { count: 4 }, dependsOn: ['A'] }),
      task('A', { gpus: { count: 4 } }),
    );
    expect([p.A.gpus, p.B.gpus]).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
  });

  it('keeps a GPU held by an earlier owner even if a later owner released it', () => {
    // A (0,1 until the end) ; B reuses nothing ; C depends on B only: must not get A's GPUs
    const p = plan(
      board(1, 4),
      task('A', { gpus: { count: 2, releaseAfter: 'workflow_completion' } }),
      task('B', { gpus: { count: 2 } }),
      task('C', { gpus: { count: 2 }, dependsOn: ['B'] }),
    );
    expect([p.A.gpus, p.B.gpus, p.C.gpus]).toEqual([
      [0, 1],
      [2, 3],
      [2, 3],
    ]);
  });

  it('reports inferred and explicit policies', () => {
    const p = plan(
      board(1, 8),
      task('svc', { hasReadiness: true, gpus: { count: 1 } }),
      task('job', { gpus: { count: 1 } }),
      task('cpu'),
      task('pinned', { nodes: { count: 1, releaseAfter: 'task_ready' } }),
    );
    expect(p.svc.releaseAfter).toEqual({ nodes: 'placement_only', gpus: 'workflow_completion' });
    expect(p.job.releaseAfter).toEqual({ nodes: 'placement_only', gpus: 'task_completion' });
    expect(p.cpu.releaseAfter).toEqual({ nodes: 'placement_only', gpus: null });
    expect(p.pinned.releaseAfter).toEqual({ nodes: 'task_ready', gpus: null });
  });

  it('coerces task_ready to task_completion on Kubernetes with a warning', () => {
    const p = plan(
      board(1, 4),
      task('T', {
        engine: K8S,
        hasReadiness: true,
        gpus: { count: 1, releaseAfter: 'task_ready' },
      }),
    );
    expect(p.T.releaseAfter.gpus).toBe('task_completion');
    expect(p.T.warnings[0]).toContain('task_ready');
  });
});

describe('node reservations', () => {
  const nodes = board(3, 4);
  const holder = task('H', { nodes: { count: 1, releaseAfter: 'workflow_completion' } });

  it('makes a later count selection skip the reserved node', () => {
    const p = plan(nodes, holder, task('T', { nodes: { count: 2 } }));
    expect(where(p.H).nodes).toEqual(['n0']);
    expect(where(p.T).nodes).toEqual(['n1', 'n2']);
  });

  it('makes GPU-driven selection skip the reserved node', () => {
    expect(where(plan(nodes, holder, task('T', { gpus: { count: 1 } })).T)).toEqual({
      nodes: ['n1'],
      gpus: [0],
    });
  });

  it('rejects pinning a reserved node, naming both tasks and the node', () => {
    const e = planError(nodes, holder, task('T', { nodes: { indices: [0] } }));
    expect(e.message).toContain("Task 'T' pins node 'n0', but it is reserved by task 'H'");
  });

  it('fails a count selection when too few unreserved nodes remain', () => {
    const e = planError(nodes, holder, task('T', { nodes: { count: 3 } }));
    expect(e.message).toContain("Task 'T' needs 3 node(s) (replica_index=0, policy=parallel)");
    expect(e.message).toContain('only 2 of the 3 node(s)');
  });

  it('leaves placement-only tasks without resources on every node', () => {
    expect(where(plan(nodes, holder, task('T')).T).nodes).toEqual(['n0', 'n1', 'n2']);
  });

  it('gives parallel reserving replicas different nodes and sequential ones the same', () => {
    const par = plan(nodes, task('R', { replicas: 2, nodes: { count: 1, releaseAfter: 'task_completion' } }));
    expect([where(par.R_0).nodes, where(par.R_1).nodes]).toEqual([['n0'], ['n1']]);
    const seq = plan(
      nodes,
      task('R', { replicas: 2, policy: 'sequential', nodes: { count: 1, releaseAfter: 'task_completion' } }),
    );
    expect([where(seq.R_0).nodes, where(seq.R_1).nodes]).toEqual([['n0'], ['n0']]);
  });
});

describe('capacity unknown (no gpus_per_node)', () => {
  it('slices by replica index on the first pool node and warns', () => {
    const p = plan(
      board(2, null, ['localhost', 'localhost-1']),
      task('T', { replicas: 2, gpus: { count: 2 } }),
    );
    expect(where(p.T_0)).toEqual({ nodes: ['localhost'], gpus: [0, 1] });
    expect(where(p.T_1)).toEqual({ nodes: ['localhost'], gpus: [2, 3] });
    expect(p.T_0.warnings[0]).toContain("Backend 'b' does not declare gpus_per_node");
  });
  it('does not detect conflicts between different tasks (documented fallback)', () => {
    const p = plan(board(1, null), task('A', { gpus: { count: 1 } }), task('B', { gpus: { count: 1 } }));
    expect([p.A.gpus, p.B.gpus]).toEqual([[0], [0]]);
  });
  it('rejects pinning nodes of known and unknown capacity together', () => {
    const nodes = [...board(1, 4), { name: 'x', ip: '', index: 1, numGpus: null }];
    const e = planError(nodes, task('T', { nodes: { count: 2 }, gpus: { count: 2 } }));
    expect(e.message).toContain("node(s) 'x'");
  });
});

describe('more GPU rules', () => {
  it('rejects indices beyond the capacity', () => {
    expect(planError(board(2, 4), task('T', { gpus: { indices: [4] } })).message).toContain(
      'indices 4 exceed',
    );
    expect(
      planError(board(2, 4), task('T', { nodes: { count: 1 }, gpus: { indices: [1, 5] } })).message,
    ).toContain("indices 5 do not exist on node 'n0' (capacity 4");
  });
  it('requires count = len(indices) × pinned nodes', () => {
    const ok = plan(board(2, 4), task('T', { nodes: { count: 2 }, gpus: { count: 4, indices: [3, 1] } }));
    expect(where(ok.T)).toEqual({ nodes: ['n0', 'n1'], gpus: [3, 1] });
    const e = planError(board(2, 4), task('T', { nodes: { count: 2 }, gpus: { count: 2, indices: [3, 1] } }));
    expect(e.message).toContain('count must equal len(indices) × nodes = 4');
  });
  it('rejects fan-out counts that are not a multiple of len(indices)', () => {
    expect(planError(board(4, 4), task('T', { gpus: { count: 3, indices: [0, 1] } })).message).toContain(
      'positive multiple of len(indices) = 2',
    );
  });
  it('rejects a missing count/indices and non-positive counts naming the field', () => {
    expect(planError(board(1, 4), task('T', { gpus: {} })).message).toContain("needs 'count' or 'indices'");
    expect(planError(board(1, 4), task('T', { gpus: { count: 0 } })).message).toContain(
      'resources.gpus.count must be an integer > 0, got 0',
    );
    expect(planError(board(1, 4), task('T', { nodes: { count: -1 } })).message).toContain(
      'resources.nodes.count must be an integer > 0, got -1',
    );
  });
  it('names the differing occupancy states of pinned nodes', () => {
    const e = planError(
      board(2, 4),
      task('A', { nodes: { indices: [0] }, gpus: { count: 2 } }),
      task('B', { nodes: { indices: [1] }, gpus: { indices: [2, 3] } }),
      task('C', { nodes: { count: 2 }, gpus: { count: 4 } }),
    );
    expect(e.message).toContain('different occupancy states');
    expect(e.message).toContain('n0 at 2, n1 at 0');
    expect(e.hint).toContain('pin nodes');
  });
  it('expands over nodes in the same state only', () => {
    const p = plan(board(3, 4), task('A', { gpus: { count: 2 } }), task('B', { gpus: { count: 8 } }));
    expect(where(p.B)).toEqual({ nodes: ['n1', 'n2'], gpus: [0, 1, 2, 3] });
  });
  it('rejects unknown dependencies, cycles and backends', () => {
    expect(planError(board(1, 4), task('A', { dependsOn: ['Z'] })).message).toContain("unknown task 'Z'");
    expect(
      planError(board(1, 4), task('A', { dependsOn: ['B'] }), task('B', { dependsOn: ['A'] })).code,
    ).toBe('PLACEMENT_DEPENDENCY_CYCLE');
    expect(planError(board(1, 4), task('A', { backend: 'nope' })).message).toContain(
      "unknown backend 'nope'",
    );
  });
});
