/**
 * Recipe → Plan. Pure apart from the inputs it is given (run id, paths, the backend catalog, the
 * allocated topology), in the resolution order of config.md §3.4, one phase per module:
 *   build-scope   global variables → backends → artifacts → workflow variables
 *   task-draft    each declared task before placement (operator, replicas, resources, probes, scripts)
 *   build-place   the task graph and placement
 *   build-tasks   scripts reading `task.*`, environment, launch specs
 */
import type { LoadedRecipe } from '../config/load.js';
import { renderValue, withExpressionBudget } from '../config/expr/index.js';
import { draftAssertions } from './assertions.js';
import { refineForBackends } from './backend-refine.js';
import { placeTasks, taskGraph } from './build-place.js';
import { planScope, type BuildOptions } from './build-scope.js';
import { finishTasks, workflowFacts } from './build-tasks.js';
import { topologicalOrder } from './dag.js';
import { workflowTimeout } from './duration.js';
import { InstanceBudget } from './limits.js';
import { checkNameLimits } from './name-limits.js';
import { checkSweepOverrides } from './sweep-overrides.js';
import { draftTask } from './task-draft.js';
import type { Plan } from './types.js';
import { planStorage, planUploadAll } from './uploads.js';
import { secretVariableNames } from '../config/secret-variables.js';

export type { BuildOptions } from './build-scope.js';

/** The plan of a loaded recipe; every expression it evaluates shares one budget (meter.ts). */
export function buildPlan(loaded: LoadedRecipe, opts: BuildOptions): Plan {
  return withExpressionBudget(() => buildPlanUnmetered(loaded, opts));
}

function buildPlanUnmetered(loaded: LoadedRecipe, opts: BuildOptions): Plan {
  const { recipe, doc } = loaded;
  const wf = recipe.workflow;
  const s = planScope(loaded, opts);
  // task instances (replicas, sweep combinations) are capped per plan, checked before they are built
  const budget = new InstanceBudget();
  const secret = secretVariableNames(doc);
  const drafts = wf.tasks.map((item, i) =>
    draftTask(
      item,
      { doc, path: ['workflow', 'tasks', i] },
      s.backends,
      recipe.operators ?? [],
      s.vars,
      s.scope,
      budget,
      secret,
    ),
  );
  const asserts = new Map(drafts.map((d) => [d, draftAssertions(d.item, d.where, s.scope)]));
  const deps = taskGraph(drafts, doc);
  const placements = placeTasks(drafts, deps, s.backends);
  const warnings: string[] = [];
  for (const p of placements.values()) for (const w of p.warnings) warnings.push(`${p.task}: ${w}`);
  const tasks = finishTasks({
    drafts,
    placements,
    deps,
    scope: s.scope,
    vars: s.vars,
    artifacts: s.artifacts,
    paths: s.paths,
    asserts,
    warnings,
    workflow: s.workflow,
    runId: opts.runId,
    env: opts.env ?? process.env,
  });
  refineForBackends(tasks, s.backends, opts.catalog, drafts, warnings, opts.runId);
  checkNameLimits(s.workflow, tasks, doc, wf.tasks, s.paths.outputDir);
  checkSweepOverrides(loaded.setOverrides ?? [], tasks, wf.tasks);
  return {
    workflow: s.workflow,
    runId: opts.runId,
    dryRun: opts.dryRun,
    paths: s.paths,
    variables: [...s.vars.values()].map((v) => ({
      name: v.name,
      rendered: renderValue(v.value),
      type: v.type,
      domain: v.domain ? v.domain.map((x) => renderValue(x)) : null,
      scope: s.globals.get(v.name) === v ? 'global' : 'workflow',
      ...(v.description ? { description: v.description } : {}),
      ...(secret.has(v.name) ? { secret: true as const } : {}),
    })),
    backends: s.backends,
    artifacts: s.artifacts,
    tasks,
    order: topologicalOrder(
      tasks.map((t) => t.name),
      deps,
    ),
    warnings,
    // storage fields resolve once, like backends; upload_all's key sees workflow.run_id (artifacts-batch.md B1, B3)
    storage: planStorage(recipe.storage ?? [], s.scope, doc),
    uploadAll: planUploadAll(
      wf.upload_all,
      { ...s.scope, workflow: workflowFacts(s, opts.runId) },
      doc,
      opts.runId,
    ),
    workflowMonitor: wf.monitor ?? null,
    workflowTimeoutS: workflowTimeout(wf.timeout, s.scope, { doc, path: ['workflow', 'timeout'] }),
  };
}
