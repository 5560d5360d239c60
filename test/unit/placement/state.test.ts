/**
 * What the planner tells the user about a backend's state (src/plan/placement/state.ts): the
 * backend summary, GPU ranges, why another task keeps a task off a GPU or a node (explicit and
 * inferred release policies, readiness probes); and the planner's own refusals (plan.ts): unknown
 * backends, backends without nodes, pinned nodes of mixed known and unknown capacity.
 */
import { describe, expect, it } from 'vitest';
import { buildAncestry } from '../../../src/plan/placement/ancestry.js';
import type { PlacementError } from '../../../src/plan/placement/errors.js';
import { effectiveGpuPolicy, planPlacement } from '../../../src/plan/placement/plan.js';
import { BackendState, Lifetimes, ranges } from '../../../src/plan/placement/state.js';
import type { PlacementRequest, TopologyNode } from '../../../src/plan/placement/types.js';
import { K8S, board, caps, fails, plan, planError, task } from './helpers.js';

function stateOf(nodes: TopologyNode[], reqs: PlacementRequest[]): BackendState {
  const anc = buildAncestry(reqs);
  const life = new Lifetimes(
    reqs,
    anc,
    reqs.map((r) => effectiveGpuPolicy(r).policy),
    reqs.map((r) => r.nodes?.releaseAfter ?? null),
  );
  return new BackendState('b', nodes, life);
}

describe('ranges', () => {
  it('joins runs of consecutive GPUs, in order', () => {
    expect(ranges([])).toBe('');
    expect(ranges([5])).toBe('5');
    expect(ranges([8, 3, 0, 1, 2, 5, 7])).toBe('0-3,5,7-8');
    expect(ranges([4, 6])).toBe('4,6');
  });
});

describe('summary', () => {
  it('names one capacity when every node has it, counting what the task may not use', () => {
    const reqs = [task('A', { gpus: { indices: [0, 1] } })[0], task('T')[0]];
    const st = stateOf(board(2, 4), reqs);
    st.reserveGpus(0, [0, 1], 0);
    expect(st.summary(1)).toBe(
      "backend 'b': 2 node(s), gpus_per_node=4, total capacity 8, allocated 2, remaining 6",
    );
  });

  it('lists mixed capacities and leaves out nodes of unknown capacity', () => {
    const st = stateOf(caps([4, null, 8]), [task('T')[0]]);
    expect(st.summary(0)).toBe(
      "backend 'b': 3 node(s), capacities=[4, 8], total capacity 12, allocated 0, remaining 12",
    );
    expect(stateOf(caps([null, null]), [task('T')[0]]).summary(0)).toBe(
      "backend 'b': 2 node(s), capacities=[], total capacity 0, allocated 0, remaining 0",
    );
  });
});

describe('gpuNodes', () => {
  it('keeps the nodes of a known, positive capacity, for the whole pool or a part', () => {
    const st = stateOf(caps([0, 4, null, 2]), [task('T')[0]]);
    expect(st.gpuNodes(st.allPositions)).toEqual([1, 3]);
    expect(st.gpuNodes([0, 1, 2])).toEqual([1]);
    expect(st.gpuPositions).toEqual([1, 3]);
  });
});

describe('why a GPU or a node is not free', () => {
  const line = (reqs: PlacementRequest[], gpus: number[], only?: number[]) => {
    const st = stateOf(board(1, 4), reqs);
    st.reserveGpus(0, gpus, 0);
    return st.describeBlockers(0, reqs.length - 1, only);
  };

  it('a task that may run at the same time, its policy inferred or written', () => {
    expect(line([task('A', { gpus: { indices: [0, 1, 3] } })[0], task('T')[0]], [0, 1, 3])).toEqual([
      "node 'n0' GPU 0-1,3: 'A' (release_after=task_completion, inferred) may run at the same time: it is not an upstream dependency of 'T'",
    ]);
    expect(
      line([task('A', { gpus: { indices: [2], releaseAfter: 'task_completion' } })[0], task('T')[0]], [2]),
    ).toEqual([
      "node 'n0' GPU 2: 'A' (release_after=task_completion) may run at the same time: it is not an upstream dependency of 'T'",
    ]);
  });

  it('an upstream service that keeps its GPUs, by inference or as written', () => {
    const inferred = [
      task('A', { gpus: { indices: [0] }, hasReadiness: true })[0],
      task('T', { dependsOn: ['A'] })[0],
    ];
    expect(line(inferred, [0])).toEqual([
      "node 'n0' GPU 0: 'A' (release_after=workflow_completion, inferred) holds them until the workflow ends because it has a readiness probe and may still be serving",
    ]);
    const written = [
      task('A', { gpus: { indices: [0], releaseAfter: 'workflow_completion' } })[0],
      task('T', { dependsOn: ['A'] })[0],
    ];
    expect(line(written, [0])).toEqual([
      "node 'n0' GPU 0: 'A' (release_after=workflow_completion) holds them until the workflow ends",
    ]);
  });

  it('an upstream service that frees them at completion, which is after the dependent starts', () => {
    const reqs = [
      task('A', { gpus: { indices: [1], releaseAfter: 'task_completion' }, hasReadiness: true })[0],
      task('T', { dependsOn: ['A'] })[0],
    ];
    expect(line(reqs, [1])).toEqual([
      "node 'n0' GPU 1: 'A' (release_after=task_completion) has a readiness probe, so 'T' may start while it still runs",
    ]);
  });

  it('nothing for GPUs an upstream task has already freed, or outside the ones asked about', () => {
    const freed = [task('A', { gpus: { indices: [0] } })[0], task('T', { dependsOn: ['A'] })[0]];
    expect(line(freed, [0])).toEqual([]);
    expect(line([task('A', { gpus: { indices: [0, 1] } })[0], task('T')[0]], [0, 1], [1, 2])).toEqual([
      "node 'n0' GPU 1: 'A' (release_after=task_completion, inferred) may run at the same time: it is not an upstream dependency of 'T'",
    ]);
    expect(stateOf(caps([null]), [task('T')[0]]).describeBlockers(0, 0)).toEqual([]);
  });

  it('a node reservation: written, or held to the end when unset', () => {
    const reqs = [task('R', { nodes: { indices: [0] } })[0], task('T')[0]];
    const st = stateOf(board(1, 0), reqs);
    expect(st.life.blockReason('nodes', 0, 1)).toBe(
      "'R' (release_after=workflow_completion) may run at the same time: it is not an upstream dependency of 'T'",
    );
    const dep = [task('R', { nodes: { indices: [0] } })[0], task('T', { dependsOn: ['R'] })[0]];
    expect(stateOf(board(1, 0), dep).life.blockReason('nodes', 0, 1)).toBe(
      "'R' (release_after=workflow_completion) holds them until the workflow ends",
    );
  });
});

describe('planPlacement refusals', () => {
  it('refuses a task on a backend the topology does not name', () => {
    const e = fails(() => planPlacement(task('A', { backend: 'zz' }), { b: board(1, 0) }));
    expect(e.code).toBe('PLACEMENT_UNKNOWN_BACKEND');
    expect(e.message).toBe("Task 'A' uses unknown backend 'zz'");
    expect(e.task).toBe('A');
    expect(fails(() => planPlacement(task('A', { backend: 'constructor' }), { b: board(1, 0) })).code).toBe(
      'PLACEMENT_UNKNOWN_BACKEND',
    );
  });

  it('refuses a backend without nodes', () => {
    const e = fails(() => planPlacement(task('A'), { b: [] }));
    expect(e.code).toBe('PLACEMENT_NO_NODES');
    expect(e.message).toBe("Task 'A': backend 'b' has no nodes to place it on");
    expect(e.task).toBe('A');
  });

  it('refuses pinned nodes where only some declare their GPUs; an unpinned pool uses the known ones', () => {
    const e = planError(
      caps([4, null, null]),
      task('A', { nodes: { indices: [0, 1, 2] }, gpus: { count: 3 } }),
    );
    expect(e.code).toBe('PLACEMENT_GPU_CAPACITY_MIXED');
    expect(e.message).toBe(
      "Task 'A' requests GPUs on node(s) 'n1', 'n2' of backend 'b', whose GPU capacity is unknown while the other " +
        'pinned nodes declare one',
    );
    expect(e.hint).toBe('set gpus_per_node on every host that runs GPU tasks');
    expect((e as PlacementError).task).toBe('A');
    const p = plan(caps([null, 4]), task('B', { gpus: { count: 2 } }));
    expect(p.B.nodes.map((n) => n.name)).toEqual(['n1']);
    expect(p.B.gpus).toEqual([0, 1]);
    expect(p.B.warnings).toEqual([]);
  });

  it('plans a packed Kubernetes request as slots without a device list and without warnings', () => {
    const p = plan(board(2, 4), task('K', { engine: K8S, gpus: { count: 2 } }));
    expect(p.K.gpus).toBeNull();
    expect(p.K.gpuSlots).toEqual([0, 1]);
    expect(p.K.warnings).toEqual([]);
  });

  it('turns task_ready into task_completion where a running GPU cannot be handed on, saying so', () => {
    const r = task('A', { engine: K8S, gpus: { count: 1, releaseAfter: 'task_ready' } })[0];
    expect(effectiveGpuPolicy(r)).toEqual({
      policy: 'task_completion',
      warning:
        `Task 'A' sets gpus.release_after: task_ready, which ${K8S.label} cannot honour (a running pod's GPUs ` +
        'cannot be shared); using task_completion',
    });
  });
});
