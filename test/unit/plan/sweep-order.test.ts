/**
 * The order of a sweep over two variables (spec config.md §5.7): one replica per element of the
 * Cartesian product, the first listed variable outermost — replica names, replica_index, the
 * sweep values, the environment and the plan's order all follow it. Needs no ../shared.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-sweep-order-');
let n = 0;

function plan(sweep: string[]): Plan {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(
    file,
    `version: "0.1"
variables:
  MODE:
    value: agg
    domain: [agg, disagg]
  CONC:
    type: integer
    value: 4
    domain: [4, 16, 64]
workflow:
  name: order
  tasks:
    - name: bench
      replicas:
        variables: [${sweep.join(', ')}]
      script: ['echo "$MODE $CONC"']
`,
  );
  return buildPlan(loadRecipe({ files: [file] }), {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

describe('a sweep over two variables', () => {
  it('expands the first listed variable outermost, the second innermost', () => {
    const p = plan(['MODE', 'CONC']);
    const want = [
      ['agg', '4'],
      ['agg', '16'],
      ['agg', '64'],
      ['disagg', '4'],
      ['disagg', '16'],
      ['disagg', '64'],
    ];
    expect(p.tasks.map((t) => t.name)).toEqual(want.map(([m, c]) => `bench_${m}_${c}`));
    expect(p.tasks.map((t) => t.replicaIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(p.tasks.map((t) => t.replicaCount)).toEqual([6, 6, 6, 6, 6, 6]);
    expect(p.tasks.map((t) => t.sweep)).toEqual(want.map(([m, c]) => ({ MODE: m, CONC: c })));
    expect(p.tasks.map((t) => [t.env.MODE, t.env.CONC])).toEqual(want);
    expect(p.order).toEqual(p.tasks.map((t) => t.name));
  });

  it('follows the order of replicas.variables, not of the declarations', () => {
    const p = plan(['CONC', 'MODE']);
    expect(p.tasks.map((t) => t.name)).toEqual([
      'bench_4_agg',
      'bench_4_disagg',
      'bench_16_agg',
      'bench_16_disagg',
      'bench_64_agg',
      'bench_64_disagg',
    ]);
    expect(p.tasks.map((t) => t.sweep.MODE)).toEqual(['agg', 'disagg', 'agg', 'disagg', 'agg', 'disagg']);
  });
});
