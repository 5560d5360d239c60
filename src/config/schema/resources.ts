/** `task.resources` (config §1.11) and the same selectors inside a monitor. */
import * as z from 'zod';
import { atom, describe, EXPR_JSON, type Expr, fail, intOrExpr, isExpr, oneOf } from './common.js';
import { strictObject } from './shapes.js';

export const RELEASE_AFTER = ['workflow_completion', 'task_ready', 'task_completion'] as const;
export type ReleaseAfter = (typeof RELEASE_AFTER)[number];

/** A list of integers/expressions, or one expression yielding a list. */
function indexList(what: string, min?: number) {
  const exprOnly = atom<Expr>(EXPR_JSON, (v) =>
    isExpr(v)
      ? undefined
      : `expected a list of integers or a \${{ }} expression for '${what}', got ${describe(v)}`,
  );
  return z.union([z.array(intOrExpr(min === undefined ? {} : { min })), exprOnly]);
}

export const NodesRequestSchema = strictObject('resources.nodes', {
  /** node indices into the backend's pool (after exclude); negatives count from the end */
  indices: indexList('indices').optional(),
  count: intOrExpr({ min: 1 }).optional(),
  /** int, list of ints, or an expression yielding either */
  exclude: z.union([z.array(intOrExpr()), intOrExpr()]).optional(),
  release_after: oneOf(RELEASE_AFTER).optional(),
}).superRefine((n, ctx) => {
  if (n.indices !== undefined && n.count !== undefined)
    fail(
      ctx,
      ['count'],
      "resources.nodes cannot set both 'indices' and 'count'",
      "use 'indices' to pin exact nodes or 'count' for a contiguous slice",
    );
});

export const GpusRequestSchema = strictObject('resources.gpus', {
  /** total GPUs across all nodes of the task */
  count: intOrExpr({ min: 0 }).optional(),
  /** per-node device ids */
  indices: indexList('indices', 0).optional(),
  release_after: oneOf(RELEASE_AFTER).optional(),
}).superRefine((g, ctx) => {
  if (g.count === undefined && g.indices === undefined) {
    fail(ctx, [], "resources.gpus requires 'count', 'indices', or both");
    return;
  }
  if (Array.isArray(g.indices)) {
    if (g.indices.length === 0) fail(ctx, ['indices'], 'resources.gpus.indices must not be empty');
    const seen = new Set<number>();
    g.indices.forEach((i, k) => {
      if (typeof i !== 'number') return;
      if (seen.has(i)) fail(ctx, ['indices', k], `resources.gpus.indices contains GPU ${i} more than once`);
      seen.add(i);
    });
  }
});

export const ResourcesSchema = strictObject('resources', {
  nodes: NodesRequestSchema.optional(),
  gpus: GpusRequestSchema.optional(),
});

export type NodesRequest = z.output<typeof NodesRequestSchema>;
export type GpusRequest = z.output<typeof GpusRequestSchema>;
export type Resources = z.output<typeof ResourcesSchema>;
