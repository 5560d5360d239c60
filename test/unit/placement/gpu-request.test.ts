/**
 * `resources.gpus` validation and the counts placement suggests (src/plan/placement/gpu-request.ts,
 * placement.md §4.2–4.3): every refusal whole (code, words, task, field, hint), the suggestions
 * near a count that does not split, and the share-fits check behind "Use count N".
 */
import { describe, expect, it } from 'vitest';
import {
  checkShareFits,
  perNodeShare,
  suggestCounts,
  validateGpus,
} from '../../../src/plan/placement/gpu-request.js';
import type { GpuRequest } from '../../../src/plan/placement/types.js';
import { K8S, fails, task } from './helpers.js';

const req = (gpus: GpuRequest | undefined, k8s = false) =>
  task('A', { ...(gpus ? { gpus } : {}), ...(k8s ? { engine: K8S } : {}) })[0];

describe('validateGpus', () => {
  it('passes a request through, and no request as none', () => {
    expect(validateGpus(req(undefined))).toBeNull();
    expect(validateGpus(req({ count: 2 }))).toEqual({ count: 2, indices: undefined });
    expect(validateGpus(req({ indices: [3, 0] }))).toEqual({ count: undefined, indices: [3, 0] });
    expect(validateGpus(req({ count: 2 }, true))).toEqual({ count: 2, indices: undefined });
  });

  it('refuses a block with neither count nor indices', () => {
    const e = fails(() => validateGpus(req({})));
    expect(e.code).toBe('PLACEMENT_GPU_EMPTY');
    expect(e.message).toBe("Task 'A' resources.gpus needs 'count' or 'indices'");
    expect(e.hint).toBe('write e.g. gpus: {count: 1}');
    expect([e.task, e.field]).toEqual(['A', 'gpus']);
  });

  it.each([0, -2, 1.5])('refuses count %s', (count) => {
    const e = fails(() => validateGpus(req({ count })));
    expect(e.code).toBe('PLACEMENT_GPU_COUNT');
    expect(e.message).toBe(`Task 'A' resources.gpus.count must be an integer > 0, got ${count}`);
    expect([e.task, e.field]).toEqual(['A', 'gpus.count']);
  });

  it('refuses indices where the engine picks the devices', () => {
    const e = fails(() => validateGpus(req({ indices: [0] }, true)));
    expect(e.code).toBe('PLACEMENT_GPU_INDICES_KUBERNETES');
    expect(e.message).toBe(
      `Task 'A' sets resources.gpus.indices, which is not supported on the ${K8S.label} backend 'b': the device ` +
        'plugin or DRA assigns the physical devices',
    );
    expect(e.hint).toBe('use resources.gpus.count to size the device request');
    expect([e.task, e.field]).toEqual(['A', 'gpus.indices']);
  });

  it('refuses an empty list', () => {
    const e = fails(() => validateGpus(req({ indices: [] })));
    expect(e.code).toBe('PLACEMENT_GPU_INDICES_EMPTY');
    expect(e.message).toBe("Task 'A' resources.gpus.indices is empty");
    expect([e.task, e.field]).toEqual(['A', 'gpus.indices']);
  });

  it('refuses negative and fractional indices, listing them', () => {
    const e = fails(() => validateGpus(req({ indices: [0, -1, 2, 1.5] })));
    expect(e.code).toBe('PLACEMENT_GPU_INDICES_NEGATIVE');
    expect(e.message).toBe("Task 'A' resources.gpus.indices must be non-negative integers, got -1, 1.5");
    expect(e.hint).toBe('unlike resources.nodes.indices, GPU indices cannot count from the end');
    expect([e.task, e.field]).toEqual(['A', 'gpus.indices']);
  });

  it('refuses an index listed twice, naming each once', () => {
    const e = fails(() => validateGpus(req({ indices: [1, 2, 1, 2, 1, 0] })));
    expect(e.code).toBe('PLACEMENT_GPU_INDICES_DUPLICATE');
    expect(e.message).toBe("Task 'A' resources.gpus.indices lists 1, 2 more than once");
    expect([e.task, e.field]).toEqual(['A', 'gpus.indices']);
  });
});

describe('suggestCounts', () => {
  it('offers the multiples of the node count on either side', () => {
    expect(suggestCounts(3, 2, 8)).toEqual([2, 4]);
    expect(suggestCounts(5, 2, Infinity)).toEqual([4, 6]);
  });

  it('keeps only counts that fit the nodes and are not zero', () => {
    expect(suggestCounts(3, 2, 2)).toEqual([2, 4]);
    expect(suggestCounts(5, 2, 2)).toEqual([4]);
    expect(suggestCounts(1, 2, 8)).toEqual([2]);
  });

  it('falls back to full nodes when nothing near fits, and to nothing without a capacity', () => {
    expect(suggestCounts(5, 2, 1)).toEqual([2]);
    expect(suggestCounts(4, 2, 8)).toEqual([16]); // 4 itself is no suggestion
    expect(suggestCounts(5, 2, 0)).toEqual([]);
    expect(suggestCounts(4, 2, Infinity)).toEqual([]);
  });
});

describe('perNodeShare', () => {
  it('divides an even count', () => {
    expect(perNodeShare(req({ count: 6 }), 6, 3, 8)).toBe(2);
  });

  it('refuses an uneven one with suggestions, or without when none exists', () => {
    const e = fails(() => perNodeShare(req({ count: 3 }), 3, 2, 8));
    expect(e.code).toBe('PLACEMENT_GPU_COUNT_NOT_DIVISIBLE');
    expect(e.message).toBe(
      "Task 'A' requests 3 GPU(s) across 2 node(s): resources.gpus.count must be a multiple of the task's node " +
        'count (2). Use count 2 or 4.',
    );
    expect(e.hint).toBe(
      "gpus.count is the total over all of the task's nodes; multiply the per-node number by the node count",
    );
    expect([e.task, e.field]).toEqual(['A', 'gpus.count']);
    expect(fails(() => perNodeShare(req({ count: 3 }), 3, 2, 0)).message).toMatch(/count \(2\)\.$/);
  });
});

describe('checkShareFits', () => {
  it('passes a share every node holds', () => {
    expect(() =>
      checkShareFits(req({ count: 8 }), 8, 4, [
        { name: 'a', cap: 4 },
        { name: 'b', cap: 8 },
      ]),
    ).not.toThrow();
  });

  it('says when the total is short, with the backend summary', () => {
    const e = fails(() =>
      checkShareFits(
        req({ count: 10 }),
        10,
        5,
        [
          { name: 'a', cap: 4 },
          { name: 'b', cap: 4 },
        ],
        'backend b: 2 node(s)',
      ),
    );
    expect(e.code).toBe('PLACEMENT_GPU_TOTAL_EXCEEDS');
    expect(e.message).toBe(
      "Task 'A' requests 10 GPU(s) in total, but its 2 assigned node(s) have only 8 GPU(s) in total (a: 4, b: 4). " +
        'Use count 8.\n  backend b: 2 node(s)',
    );
    expect(e.task).toBe('A');
    const bare = fails(() => checkShareFits(req({ count: 10 }), 10, 5, [{ name: 'a', cap: 4 }]));
    expect(bare.message.endsWith('(a: 4). Use count 4.')).toBe(true);
  });

  it('says which node is too small when the total would do', () => {
    const e = fails(() =>
      checkShareFits(req({ count: 6 }), 6, 3, [
        { name: 'a', cap: 4 },
        { name: 'b', cap: 2 },
      ]),
    );
    expect(e.code).toBe('PLACEMENT_GPU_SHARE_EXCEEDS');
    expect(e.message).toBe(
      "Task 'A' requests 6 GPU(s) over 2 node(s), i.e. 3 per node, but node 'b' has capacity 2. Use count 4.",
    );
    expect(e.hint).toBe('every node of a task gets the same number of GPUs');
    expect(e.task).toBe('A');
    const none = fails(() =>
      checkShareFits(req({ count: 4 }), 4, 2, [
        { name: 'a', cap: 0 },
        { name: 'b', cap: 4 },
      ]),
    );
    expect(none.message).toBe(
      "Task 'A' requests 4 GPU(s) over 2 node(s), i.e. 2 per node, but node 'a' has capacity 0.",
    );
  });
});
