/**
 * Each concrete task's environment, paths and launch spec, as the plan builds them for many
 * replicas (stores into a fresh object, paths joined once per run folder), equal — values and
 * key order — to the formula they replaced: `{ ...base, ...sweep, SFLOW_TASK_… }` with
 * `path.join` for every path, for random recipes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { folderName } from '../../../src/plan/folder-name.js';
import type { Plan, PlannedTask } from '../../../src/plan/types.js';
import { scratchDir } from '../../helpers/scratch.js';
import { randomRecipe } from './random-recipe.js';

const dir = scratchDir('sflow-replica-env-');
let n = 0;

function plan(yaml: string): Plan {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  return buildPlan(loadRecipe({ files: [file] }), {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

/** the environment as it was built before: one spread literal, every path through path.join */
function formerEnv(p: Plan, t: PlannedTask): Record<string, string> {
  const base: Record<string, string> = {};
  for (const v of p.variables) base[v.name] = v.rendered;
  base.SFLOW_WORKSPACE_DIR = p.paths.workspaceDir;
  base.SFLOW_OUTPUT_DIR = p.paths.outputDir;
  base.SFLOW_WORKFLOW_OUTPUT_DIR = p.paths.runDir;
  base.SFLOW_WORKFLOW_RESULT_FILE = join(p.paths.runDir, 'results.json');
  const outputDir = join(p.paths.runDir, folderName(t.name));
  const env: Record<string, string> = {
    ...base,
    ...t.sweep,
    SFLOW_TASK_OUTPUT_DIR: outputDir,
    SFLOW_TASK_NAME: t.name,
    SFLOW_REPLICA_INDEX: String(t.replicaIndex),
    SFLOW_TASK_ASSIGNED_NODE_NAMES: t.nodes.map((x) => x.name).join(','),
    SFLOW_TASK_ASSIGNED_NODE_IPS: t.nodes.map((x) => x.ip).join(','),
    SFLOW_TASK_NUM_NODES: String(t.nodes.length),
    SFLOW_TASK_NODE_INDEX: '0',
    SFLOW_TASK_NODE_NAME: t.nodes[0]?.name ?? '',
    // no engine job on the local backend: the run id
    SFLOW_BACKEND_JOB_ID: p.runId,
    SFLOW_LEADER_ADDRESS: t.nodes[0]?.ip ?? '127.0.0.1',
    SFLOW_TASK_RESULT_FILE: join(outputDir, 'result.json'),
  };
  if (t.gpus && t.gpus.length) env.CUDA_VISIBLE_DEVICES = env.SFLOW_GPU_PLAN = t.gpus.join(',');
  return env;
}

describe('replica environments', () => {
  it('equal the former spread-and-join formula, key order included (property)', () => {
    let replicated = 0;
    fc.assert(
      fc.property(randomRecipe, (yaml) => {
        const p = plan(yaml);
        for (const t of p.tasks) {
          if (t.replicaCount > 1) replicated++;
          expect(Object.entries(t.env)).toEqual(Object.entries(formerEnv(p, t)));
          expect(t.outputDir).toBe(join(p.paths.runDir, folderName(t.name)));
          expect(t.logPath).toBe(join(t.outputDir, `${folderName(t.name)}.log`));
          expect(t.launch).toHaveLength(1);
          expect(t.launch[0].env).toBe(t.env);
          expect(Object.keys(t.launch[0])).toEqual(['node', 'nodeIndex', 'argv', 'env', 'mounts', 'devices']);
          expect(t.argv).toBe(t.launch[0].argv);
        }
      }),
      { numRuns: 40 },
    );
    expect(replicated).toBeGreaterThan(0);
  });

  it('are separate objects per replica: changing one leaves the others as planned', () => {
    const p = plan(
      'workflow:\n  name: w\n  tasks:\n    - name: t\n      replicas:\n        count: 3\n      script:\n        - echo hi\n',
    );
    const [a, b] = p.tasks;
    expect(a.env).not.toBe(b.env);
    a.env.SFLOW_OUTPUT_DIR = 'changed';
    expect(b.env.SFLOW_OUTPUT_DIR).toBe(p.paths.outputDir);
    expect(b.env.SFLOW_TASK_NAME).toBe('t_1');
  });
});
