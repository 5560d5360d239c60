import { describe, expect, it } from 'vitest';
import { allocationMap, planPlacement, renderAllocationMap } from '../../../src/plan/placement/index.js';
import type { TaskPlacement } from '../../../src/plan/placement/index.js';
import { board, task } from './helpers.js';

describe('allocation map', () => {
  it('lists owners per GPU and tasks per node (E7 board)', () => {
    const topo = { b: board(2, 4, ['n1', 'n2']) };
    const placements = planPlacement(
      [
        ...task('t1', { gpus: { count: 2 } }),
        ...task('t2', { replicas: 2, gpus: { count: 1 } }),
        ...task('frontend', { nodes: { indices: [0] } }),
      ],
      topo,
    );
    const map = allocationMap(placements, topo);
    expect(map).toHaveLength(1);
    const n1 = map[0].nodes[0];
    expect(n1.gpus?.map((g) => g.owners)).toEqual([['t1'], ['t1'], ['t2_0'], ['t2_1']]);
    expect(n1.tasks).toEqual(['t1', 't2_0', 't2_1', 'frontend']);
    expect(map[0].nodes[1].tasks).toEqual([]);
    const text = renderAllocationMap(map).join('\n');
    expect(text).toContain('Allocation map (finalized node/GPU assignment):');
    expect(text).toContain("  - backend 'b':");
    expect(text).toContain('├─ node n1');
    expect(text).toContain('│   GPU 2: t2_0');
    expect(text).toContain('│   GPU 3: t2_1');
    expect(text).toContain('│   Tasks: t1, t2_0, t2_1, frontend');
    expect(text).toContain('├─ node n2\n    │   GPU 0: .');
    expect(text).toContain('│   Tasks: (none)');
  });

  it('joins owners over time with / and truncates long labels', () => {
    const topo = { b: board(1, 2) };
    const placements = planPlacement(
      [
        ...task('producer_with_long_name', { gpus: { count: 1 } }),
        ...task('c', { gpus: { count: 1 }, dependsOn: ['producer_with_long_name'] }),
        ...task('a', { gpus: { count: 1 } }),
      ],
      topo,
    );
    const gpus = allocationMap(placements, topo)[0].nodes[0].gpus;
    expect(gpus?.map((g) => g.owners)).toEqual([['producer_with_long_name', 'c'], ['a']]);
    const text = renderAllocationMap(allocationMap(placements, topo));
    expect(text).toContain('    │   GPU 0: producer_with_l...');
    expect(text).toContain('    │   GPU 1: a');
  });

  it('shows GPUs: n/a for unknown capacity, counts node-less tasks everywhere, skips idle backends', () => {
    const topo = { b: board(2, null), other: board(1, 4) };
    const loose: TaskPlacement = {
      task: 'x',
      backend: 'b',
      nodes: [],
      gpus: null,
      gpusPerNode: null,
      releaseAfter: { nodes: 'placement_only', gpus: null },
      warnings: [],
    };
    const map = allocationMap([loose], topo);
    expect(map.map((m) => m.backend)).toEqual(['b']);
    expect(map[0].nodes.map((n) => n.tasks)).toEqual([['x'], ['x']]);
    expect(renderAllocationMap(map).filter((l) => l.includes('GPUs: n/a'))).toHaveLength(2);
    expect(renderAllocationMap([])).toEqual([]);
  });

  it('skips nodes and GPUs the topology does not have, a backend with no nodes, and keeps an 18-character label', () => {
    const topo = { b: board(1, 2), empty: [] };
    const base: TaskPlacement = {
      task: 'exactly_18_chars__',
      backend: 'b',
      nodes: [board(1, 2)[0]],
      gpus: [1, 5],
      gpusPerNode: 2,
      releaseAfter: { nodes: 'placement_only', gpus: 'task_completion' },
      warnings: [],
    };
    const elsewhere: TaskPlacement = { ...base, task: 'ghost', nodes: [board(2, 2, ['n0', 'gone'])[1]] };
    const onEmpty: TaskPlacement = { ...base, task: 'e', backend: 'empty' };
    const map = allocationMap([base, elsewhere, onEmpty], topo);
    expect(map.map((m) => m.backend)).toEqual(['b']);
    expect(map[0].nodes[0].tasks).toEqual(['exactly_18_chars__']);
    expect(map[0].nodes[0].gpus?.map((g) => g.owners)).toEqual([[], ['exactly_18_chars__']]);
    const text = renderAllocationMap(map);
    expect(text).toContain('    │   GPU 0: .');
    expect(text).toContain('    │   GPU 1: exactly_18_chars__');
  });
});
