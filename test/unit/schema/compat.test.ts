/** Every real recipe (compat/) and spec example validates; fragments validate once completed. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { expect, it } from 'vitest';
import { describeWithShared, SHARED, sharedPath } from '../../helpers/shared.js';
import { recipeJsonSchema, validateRecipe } from '../../../src/config/schema/index.js';
import { completeFragment, loadYaml, normalise, SINGLE_FILE_DIRS } from './helpers.js';
import { check } from './mini-json-schema.js';
import { parseDuration } from '../../../src/plan/duration.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return p.endsWith('.yaml') ? [p] : [];
  });
}

const ALL = SINGLE_FILE_DIRS.filter((d) => existsSync(d))
  .flatMap(yamlFiles)
  .sort();
/** Pieces of multi-file compositions (compat README "Fragments", spec example 11). */
const isFragment = (f: string) => /\/modular\/|\/inference_x_v2\//.test(f) || f.includes('/11_modular/');
const SINGLE = ALL.filter((f) => !isFragment(f));
const FRAGMENTS = ALL.filter(isFragment);
const rel = (f: string) => relative(SHARED, f);

describeWithShared('compat', 'real recipes', () => {
  it('finds the corpus', () => {
    expect(SINGLE.length).toBeGreaterThanOrEqual(35);
    expect(FRAGMENTS.length).toBeGreaterThanOrEqual(25);
  });

  it.each(SINGLE.map(rel))('%s validates', (f) => {
    const r = validateRecipe(loadYaml(join(SHARED, f)));
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  it.each(FRAGMENTS.map(rel))('fragment %s validates once completed', (f) => {
    const r = validateRecipe(completeFragment(loadYaml(join(SHARED, f))));
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  it('a bare fragment reports only the cross-file gaps', () => {
    for (const f of FRAGMENTS) {
      const r = validateRecipe(loadYaml(f));
      if (r.ok) continue;
      for (const i of r.issues)
        expect(i.message, rel(f)).toMatch(
          /^(missing required key '(workflow|name|tasks)'|'tasks' cannot be empty|Task '.*' depends on unknown task '.*'|Task '.*' is required_by unknown task '.*')$/,
        );
    }
  });

  it('the JSON Schema accepts every recipe in its source (dict) form', () => {
    const schema = recipeJsonSchema() as Record<string, unknown>;
    for (const f of SINGLE) expect(check(schema, parse(readFileSync(f, 'utf8'))), rel(f)).toEqual([]);
    for (const f of FRAGMENTS) expect(check(schema, completeFragment(loadYaml(f))), rel(f)).toEqual([]);
  });
});

describeWithShared('compat', 'normalisation seen on real recipes', () => {
  it('recovers `- echo "x: y"` script lines that YAML read as mappings', () => {
    const r = validateRecipe(
      loadYaml(sharedPath('compat', 'examples', 'self_contained', 'slurm', 'gpu_indices.yaml')),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const lines = r.recipe.workflow.tasks.flatMap((t) => t.script);
    expect(lines).toContain('echo "pin_low GPUs: $CUDA_VISIBLE_DEVICES"');
    expect(lines.every((l) => typeof l === 'string')).toBe(true);
  });

  it('turns match_pattern into regex_pattern and single probes into lists', () => {
    const doc = normalise(
      parse(
        readFileSync(
          sharedPath(
            'compat',
            'src',
            'sflow',
            'samples',
            'self_contained',
            'slurm',
            'sglang_server_client.yaml',
          ),
          'utf8',
        ),
      ),
    );
    const r = validateRecipe(doc);
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const probes = r.recipe.workflow.tasks.flatMap((t) => [
      ...(t.probes?.readiness ?? []),
      ...(t.probes?.failure ?? []),
    ]);
    expect(probes.length).toBeGreaterThan(0);
    const watches = probes.flatMap((p) => (p.log_watch ? [p.log_watch] : []));
    expect(watches.length).toBeGreaterThan(0);
    for (const w of watches) {
      expect(Object.keys(w)).not.toContain('match_pattern');
      expect(typeof w.regex_pattern).toBe('string');
    }
  });

  it('every workflow.timeout is a duration the run can enforce', () => {
    const timeouts = SINGLE.flatMap((f) => {
      const r = validateRecipe(loadYaml(f));
      const t = r.ok ? r.recipe.workflow.timeout : undefined;
      return t === undefined || t === null ? [] : [[rel(f), String(t)]];
    });
    expect(timeouts.length).toBeGreaterThan(0);
    for (const [f, t] of timeouts) expect(parseDuration(t), `${f}: ${t}`).toBeGreaterThan(0);
  });
});
