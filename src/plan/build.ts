/**
 * Recipe → Plan. Pure apart from the inputs it is given (run id, paths, topology): resolution
 * order as in spec config.md §3.4 — global variables → backends → artifacts → workflow variables →
 * tasks (operators, replicas, resources, retries, probes, scripts) → placement → scripts that read
 * `task.*` → environment and exact commands.
 */
import { join, resolve } from 'node:path';
import type { LoadedRecipe } from '../config/load.js';
import { SflowError } from '../config/errors.js';
import { locate } from '../config/source.js';
import { renderValue, withExpressionBudget, type Scope } from '../config/expr/index.js';
import { OPERATORS } from '../operators/index.js';
import { planPlacement } from './placement/index.js';
import type { PlacementRequest } from './placement/types.js';
import { artifactsNamespace, planArtifact } from './artifacts.js';
import { backendsNamespace, planBackends } from './backends.js';
import { concreteDependencies, cycleError, findCycle, topologicalOrder, type BaseTask } from './dag.js';
import { folderName } from './folder-name.js';
import { InstanceBudget } from './limits.js';
import { refuseNulInTask } from './nul-check.js';
import { finaliseProbe } from './probes.js';
import { draftTask, finishScript, plannedResult, type Draft } from './task-draft.js';
import { taskNamespace, type TaskFacts } from './task-namespace.js';
import type { Plan, PlannedNode, PlannedTask } from './types.js';
import { resolveVariables, variableScope, type RawVariable, type ResolvedVariable } from './variables.js';

type Obj = Record<string, any>;

export interface BuildOptions {
  dryRun: boolean;
  runId: string;
  workspaceDir: string;
  outputDir?: string;
  /** real nodes per backend (after allocation); placeholders when absent */
  topology?: Record<string, PlannedNode[]>;
}

/** The plan of a loaded recipe; every expression it evaluates shares one budget (meter.ts). */
export function buildPlan(loaded: LoadedRecipe, opts: BuildOptions): Plan {
  return withExpressionBudget(() => buildPlanUnmetered(loaded, opts));
}

function buildPlanUnmetered(loaded: LoadedRecipe, opts: BuildOptions): Plan {
  const { recipe, doc } = loaded as { recipe: Obj; doc: Obj };
  const wf = recipe.workflow as Obj;
  const workflowName = String(wf.name);
  const workspaceDir = resolve(opts.workspaceDir);
  const outputDir = resolve(workspaceDir, opts.outputDir ?? 'sflow_output');
  const runDir = opts.dryRun
    ? join(outputDir, '_dry_run', folderName(workflowName))
    : join(outputDir, folderName(opts.runId));
  const warnings: string[] = [];

  // 1. global variables
  const rawGlobals = rawVariables((recipe.variables as Obj[]) ?? [], doc, ['variables']);
  const globals = resolveVariables(rawGlobals, new Map(), {});
  const globalScope = variableScope(globals);

  // 2. backends
  const backendItems = ((recipe.backends as Obj[]) ?? []).map((item, i) => ({
    item,
    where: { doc, path: ['backends', i] },
  }));
  const backends = planBackends(backendItems, globalScope, opts.topology);
  const workflowNs = { name: workflowName };

  // 3. artifacts
  const artScope = variableScope(globals, { backends: backendsNamespace(backends), workflow: workflowNs });
  const artifacts = ((recipe.artifacts as Obj[]) ?? []).map((a, i) =>
    planArtifact(
      a as { name: string; uri: string; content?: string },
      artScope,
      { doc, path: ['artifacts', i] },
      { workspaceDir, runDir },
    ),
  );

  // 4. workflow variables
  const extras: Scope = {
    backends: backendsNamespace(backends),
    artifacts: artifactsNamespace(artifacts),
    workflow: workflowNs,
  };
  const rawWf = rawVariables((wf.variables as Obj[]) ?? [], doc, ['workflow', 'variables']);
  const vars = resolveVariables(rawWf, globals, extras);
  const scope = variableScope(vars, extras);

  // 5. tasks (pre-placement)
  const tasks = wf.tasks as Obj[];
  const budget = new InstanceBudget();
  const drafts = tasks.map((item, i) =>
    draftTask(
      item,
      { doc, path: ['workflow', 'tasks', i] },
      backends,
      (recipe.operators as Obj[]) ?? [],
      vars,
      scope,
      budget,
    ),
  );

  const baseTasks: BaseTask[] = drafts.map((d) => ({
    name: d.base,
    dependsOn: ((d.item.depends_on as string[]) ?? []).filter((x) => x !== undefined),
    policy: d.expansion.policy,
    instances: d.expansion.instances.map((x) => x.name),
  }));
  const cycle = findCycle(baseTasks);
  if (cycle) {
    const i = drafts.findIndex((d) => d.base === cycle[0]);
    throw cycleError(baseTasks, cycle, locate(doc, ['workflow', 'tasks', i, 'depends_on']));
  }
  const deps = concreteDependencies(baseTasks);

  // 6. placement
  const requests: PlacementRequest[] = [];
  for (const d of drafts) {
    for (const inst of d.expansion.instances) {
      requests.push({
        task: inst.name,
        base: d.base,
        backend: d.backend.name,
        backendType: d.backend.type,
        replicaIndex: inst.replicaIndex,
        policy: d.expansion.policy,
        ...(d.resources.nodes ? { nodes: d.resources.nodes } : {}),
        ...(d.resources.gpus ? { gpus: d.resources.gpus } : {}),
        hasReadiness: d.probes.some((p) => p.role === 'readiness'),
        dependsOn: deps.get(inst.name) ?? [],
      });
    }
  }
  const topology = Object.fromEntries(backends.map((b) => [b.name, b.nodes]));
  const placements = new Map(placeWithLocation(requests, topology, drafts).map((p) => [p.task, p]));
  for (const p of placements.values()) for (const w of p.warnings) warnings.push(`${p.task}: ${w}`);

  // 7. scripts reading task.*, environment, commands
  const facts: TaskFacts[] = [];
  for (const d of drafts) {
    for (const inst of d.expansion.instances) {
      const p = placements.get(inst.name)!;
      facts.push({
        name: inst.name,
        base: d.base,
        replicated: d.expansion.replicated,
        nodes: p.nodes,
        gpus: p.gpus,
        backend: d.backend.name,
        operator: d.operator.name,
      });
    }
  }
  const taskScope: Scope = { ...scope, task: taskNamespace(facts) };
  const instancesOf = new Map(drafts.map((d) => [d.base, d.expansion.instances.map((x) => x.name)]));
  const baseEnv = baseEnvironment(vars, artifacts, { workspaceDir, outputDir, runDir });
  const planned: PlannedTask[] = [];
  for (const d of drafts) {
    const script = finishScript(d, taskScope, facts);
    for (const inst of d.expansion.instances) {
      const p = placements.get(inst.name)!;
      const outputDirTask = join(runDir, folderName(inst.name));
      const env: Record<string, string> = { ...baseEnv };
      for (const [k, v] of Object.entries(inst.sweep)) env[k] = renderValue(v);
      Object.assign(env, {
        SFLOW_TASK_OUTPUT_DIR: outputDirTask,
        SFLOW_TASK_NAME: inst.name,
        SFLOW_REPLICA_INDEX: String(inst.replicaIndex),
        SFLOW_TASK_ASSIGNED_NODE_NAMES: p.nodes.map((n) => n.name).join(','),
        SFLOW_TASK_ASSIGNED_NODE_IPS: p.nodes.map((n) => n.ip).join(','),
        SFLOW_TASK_NUM_NODES: String(p.nodes.length),
        SFLOW_TASK_NODE_INDEX: '0',
        SFLOW_LEADER_ADDRESS: p.nodes[0]?.ip ?? '127.0.0.1',
        SFLOW_TASK_RESULT_FILE: join(outputDirTask, 'result.json'),
      });
      if (p.gpus && p.gpus.length) env.CUDA_VISIBLE_DEVICES = p.gpus.join(',');
      const instances = instancesOf;
      const loggerInstance = (base: string): string => {
        const list = instances.get(base) ?? [base];
        return list[Math.min(inst.replicaIndex, list.length - 1)];
      };
      const argv = OPERATORS[d.operator.type]?.({
        task: inst.name,
        type: d.operator.type,
        config: d.operator.config,
        script,
        nodes: p.nodes,
        gpus: p.gpus,
        env,
        allocationId: d.backend.placeholder ? '0' : String(d.backend.config.job_id ?? d.backend.name),
        backendConfig: d.backend.config,
      }) ?? ['bash', '-c', script];
      refuseNulInTask(inst.name, argv, env, d.where);
      planned.push({
        name: inst.name,
        base: d.base,
        replicaIndex: inst.replicaIndex,
        replicaCount: d.expansion.instances.length,
        policy: d.expansion.policy,
        sweep: Object.fromEntries(Object.entries(inst.sweep).map(([k, v]) => [k, renderValue(v)])),
        backend: d.backend.name,
        backendType: d.backend.type,
        operator: d.operator,
        dependsOn: deps.get(inst.name) ?? [],
        script,
        argv,
        env,
        nodes: p.nodes,
        gpus: p.gpus,
        resources: d.hasResources ? d.resources : null,
        releaseAfter: p.releaseAfter,
        retries: d.retries,
        probes: {
          readiness: d.probes
            .filter((x) => x.role === 'readiness')
            .map((x) => finaliseProbe(x, p.nodes, inst.name, loggerInstance)),
          failure: d.probes
            .filter((x) => x.role === 'failure')
            .map((x) => finaliseProbe(x, p.nodes, inst.name, loggerInstance)),
        },
        result: plannedResult(d.item.result),
        outputs: Array.isArray(d.item.outputs)
          ? (d.item.outputs as Obj[]).map((o) => ({
              pattern: String(o.pattern),
              source: String(o.source ?? 'stdout'),
            }))
          : null,
        uploads: (d.item.uploads as unknown[]) ?? null,
        monitor: d.item.monitor ?? null,
        failFast: d.failFast,
        outputDir: outputDirTask,
        logPath: join(outputDirTask, `${folderName(inst.name)}.log`),
      });
    }
  }
  const order = topologicalOrder(
    planned.map((t) => t.name),
    deps,
  );
  return {
    workflow: workflowName,
    runId: opts.runId,
    dryRun: opts.dryRun,
    paths: { workspaceDir, outputDir, runDir },
    variables: [...vars.values()].map((v) => ({
      name: v.name,
      rendered: renderValue(v.value),
      type: v.type,
      domain: v.domain ? v.domain.map((x) => renderValue(x)) : null,
      scope: globals.get(v.name) === v ? 'global' : 'workflow',
      ...(v.description ? { description: v.description } : {}),
    })),
    backends,
    artifacts,
    tasks: planned,
    order,
    warnings,
    storage: (recipe.storage as unknown[]) ?? [],
    uploadAll: wf.upload_all ?? null,
    workflowMonitor: wf.monitor ?? null,
  };
}

/** Placement errors name the task; point them at its `resources` in the recipe. */
function placeWithLocation(
  requests: PlacementRequest[],
  topology: Record<string, PlannedNode[]>,
  drafts: Draft[],
): ReturnType<typeof planPlacement> {
  try {
    return planPlacement(requests, topology);
  } catch (e) {
    if (!(e instanceof SflowError) || e.location) throw e;
    const name = /Task '([^']+)'/.exec(e.message)?.[1];
    const req = requests.find((r) => r.task === name);
    const d = drafts.find((x) => x.base === (req?.base ?? name));
    if (!d) throw e;
    const res = (d.item.resources ?? {}) as Obj;
    const named = /resources\.(nodes|gpus)(?:\.(indices|count|exclude))?/.exec(e.message);
    const kind = named?.[1] ?? (res.gpus ? 'gpus' : res.nodes ? 'nodes' : undefined);
    const field = named?.[2];
    const path = [
      ...d.where.path,
      ...(kind && res[kind] ? ['resources', kind] : ['resources']),
      ...(kind && field && res[kind]?.[field] !== undefined ? [field] : []),
    ];
    throw new SflowError(e.code, e.message, {
      phase: e.phase,
      hint: e.hint,
      details: e.details,
      location: locate(d.where.doc, path),
    });
  }
}

function rawVariables(list: Obj[], doc: Obj, prefix: (string | number)[]): RawVariable[] {
  let container: any = doc;
  for (const seg of prefix) container = container?.[seg];
  return list.map((v, i) => ({
    name: String(v.name),
    value: v.value,
    type: v.type ?? null,
    domain: v.domain ?? null,
    description: v.description ?? null,
    where: { doc, path: [...prefix, i] },
    docItem: Array.isArray(container) ? container[i] : undefined,
  }));
}

function baseEnvironment(
  vars: Map<string, ResolvedVariable>,
  artifacts: { name: string; path: string }[],
  dirs: { workspaceDir: string; outputDir: string; runDir: string },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const a of artifacts) if (!vars.has(a.name)) env[a.name] = a.path;
  for (const v of vars.values()) env[v.name] = v.value === null ? 'None' : renderValue(v.value);
  env.SFLOW_WORKSPACE_DIR = dirs.workspaceDir;
  env.SFLOW_OUTPUT_DIR = dirs.outputDir;
  env.SFLOW_WORKFLOW_OUTPUT_DIR = dirs.runDir;
  env.SFLOW_WORKFLOW_RESULT_FILE = join(dirs.runDir, 'results.json');
  return env;
}
