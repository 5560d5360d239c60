/**
 * The recipe a run records for `--resume` (sflow_recipe.yaml: the composed recipe, overrides and
 * monitor flags applied) loads on its own into the same plan, and composes back to the same text
 * — else resuming without -f would see a change that is not there. Checked on every shipped
 * sample and, with ../shared, on every compat case that dry-runs.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backendCatalog } from '../../src/backends/registry.js';
import { composedRecipeText, runInputs, variablesOf } from '../../src/cli/run-record.js';
import { loadRecipe } from '../../src/config/load.js';
import { buildPlan } from '../../src/plan/build.js';
import type { Plan } from '../../src/plan/types.js';
import { REPO } from '../helpers/cli.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'sflow-record-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

function plan(files: string[], set: string[], missable: string[], cwd: string) {
  const loaded = loadRecipe({ files, set, missable, artifacts: [] });
  const p = buildPlan(loaded, {
    workspaceDir: cwd,
    outputDir: join(tmp, 'out'),
    dryRun: true,
    runId: 'r',
    catalog: backendCatalog,
  });
  return { loaded, p };
}

const shape = (p: Plan) => ({
  variables: variablesOf(p),
  tasks: p.tasks.map((t) => ({
    name: t.name,
    deps: t.dependsOn,
    argv: t.launch.map((l) => l.argv),
    env: t.env,
  })),
});

/** Records the composition, reloads the record alone, and compares. */
function roundTrip(files: string[], set: string[] = [], missable: string[] = [], cwd = REPO): void {
  const opts = { set, missableTasks: missable, enableWorkflowMonitor: true };
  const first = plan(files, set, missable, cwd);
  const text = composedRecipeText(first.loaded, runInputs(files, opts));
  const recorded = join(tmp, `sflow_recipe_${++n}.yaml`);
  writeFileSync(recorded, text);
  const second = plan([recorded], [], [], cwd);
  expect(composedRecipeText(second.loaded, runInputs([recorded], { enableWorkflowMonitor: true }))).toBe(
    text,
  );
  expect(shape(second.p)).toEqual(shape(first.p));
}

const SAMPLES = join(REPO, 'assets', 'samples', 'self_contained');
const single = readdirSync(SAMPLES).flatMap((d) =>
  readdirSync(join(SAMPLES, d))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(d, f)),
);

describe('the recorded recipe plans the same run', () => {
  it.each(single)('sample %s', (f) => roundTrip([join(SAMPLES, f)]));

  it('the modular backend_agnostic sample composed from four files, with -s', () => {
    const dir = join(REPO, 'assets', 'samples', 'modular', 'backend_agnostic');
    roundTrip(
      [
        'backends/local.yaml',
        'workloads/dynamo_common.yaml',
        'workloads/dynamo_vllm_disagg.yaml',
        'benchmark.yaml',
      ].map((f) => join(dir, f)),
    );
  });
});

describeWithShared(
  'compat',
  'the recorded recipe of every compat case that dry-runs plans the same run',
  () => {
    const compat = sharedPath('compat');
    const cases = readFileSync(join(compat, 'cases.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.split('|').map((x) => x.trim()))
      .filter(([, expected]) => expected === 'ok');
    it.each(cases.map(([id, , args]) => [id, args] as const))('%s', (_id, args) => {
      const words = args.split(/\s+/);
      const files: string[] = [];
      const set: string[] = [];
      const missable: string[] = [];
      for (let i = 0; i < words.length; i += 2) {
        const [flag, v] = [words[i], words[i + 1]];
        if (flag === '-f') files.push(resolve(compat, v));
        else if (flag === '-s') set.push(v);
        else if (flag === '-M') missable.push(v);
        else throw new Error(`unexpected ${flag}`);
      }
      expect(files.every((f) => statSync(f).isFile())).toBe(true);
      roundTrip(files, set, missable, compat);
    });
  },
);
