/**
 * `sflow run -e/--extra-args` onto every slurm backend's extra_args (in order, repeated bare values
 * kept, a repeated option warned and skipped), and SFLOW_SLURM_GPUS_PER_NODE (set by scripts of
 * `sflow batch -G`) as every slurm backend's gpus_per_node.
 */
import { describe, expect, it } from 'vitest';
import { applySlurmExtraArgs, applySlurmGpusPerNode } from '../../../src/backends/slurm/extra-args.js';
import type { Recipe } from '../../../src/config/schema/index.js';

/** the loose backends of a test as the validated recipe's (only the fields the code reads) */
const asRecipe = (r: { backends: object[] }) => r as unknown as Pick<Recipe, 'backends'>;

const recipe = () => ({
  backends: [
    { name: 'cl', type: 'slurm', extra_args: ['--exclusive'], gpus_per_node: 8 },
    { name: 'loc', type: 'local' },
  ],
});

describe('slurm extra args and GPUs per node from the command line', () => {
  it('-e values follow the recipe own, in order; -G 1 -N 1 keeps both 1s; a repeated option is skipped', () => {
    const r = recipe();
    const w = applySlurmExtraArgs(asRecipe(r), ['-G', '1', '-N', '1', '--exclusive']);
    expect(r.backends[0].extra_args).toEqual(['--exclusive', '-G', '1', '-N', '1']);
    expect(r.backends[1]).toEqual({ name: 'loc', type: 'local' });
    expect(w).toEqual(["-e --exclusive: backend 'cl' already passes --exclusive; not added twice"]);
  });

  it('a recipe without a slurm backend: a warning, nothing changed', () => {
    const r = { backends: [{ name: 'loc', type: 'local' }] };
    expect(applySlurmExtraArgs(asRecipe(r), ['--x'])[0]).toContain('no slurm backend');
  });

  it('SFLOW_SLURM_GPUS_PER_NODE replaces gpus_per_node (noted); a bad value is ignored (noted)', () => {
    const r = recipe();
    expect(applySlurmGpusPerNode(asRecipe(r), { SFLOW_SLURM_GPUS_PER_NODE: '4' })[0]).toContain(
      'gpus_per_node 8 → 4',
    );
    expect(r.backends[0].gpus_per_node).toBe(4);
    expect(applySlurmGpusPerNode(asRecipe(r), { SFLOW_SLURM_GPUS_PER_NODE: 'x' })[0]).toContain('ignored');
    expect(r.backends[0].gpus_per_node).toBe(4);
    expect(applySlurmGpusPerNode(asRecipe(r), {})).toEqual([]);
  });
});
