/**
 * Phases 1–4 of the plan (config.md §3.4): global variables → backends (on the catalog's
 * placeholders or the allocated topology) → artifacts → workflow variables, and the expression
 * scope the tasks resolve in.
 */
import { join, resolve } from 'node:path';
import type { LoadedRecipe } from '../config/load.js';
import type { Scope } from '../config/expr/index.js';
import {
  resolveVariables,
  variableScope,
  type RawVariable,
  type ResolvedVariable,
} from '../config/variables.js';
import type { PathSeg } from '../config/source.js';
import { ownField } from '../util/own-field.js';
import { artifactsNamespace, planArtifact } from './artifacts.js';
import { backendsNamespace, planBackends } from './backends.js';
import { folderName } from './folder-name.js';
import type { BackendCatalog, PlanPaths, PlannedArtifact, PlannedBackend, PlannedNode } from './types.js';

import type { Variable } from '../config/schema/variable.js';

export interface BuildOptions {
  dryRun: boolean;
  runId: string;
  workspaceDir: string;
  outputDir?: string;
  /** backend type → capabilities and placeholder topology (the registry; the CLI hands it in) */
  catalog: BackendCatalog;
  /** real nodes per backend (after allocation); placeholders when absent */
  topology?: Record<string, PlannedNode[]>;
  /** the controller's environment, read by `env.X` in upload paths (default process.env) */
  env?: NodeJS.ProcessEnv;
}

export interface PlanScope {
  workflow: string;
  paths: PlanPaths;
  globals: Map<string, ResolvedVariable>;
  vars: Map<string, ResolvedVariable>;
  backends: PlannedBackend[];
  artifacts: PlannedArtifact[];
  scope: Scope;
}

const isList = (v: unknown): v is unknown[] => Array.isArray(v);

function rawVariables(list: readonly Variable[], doc: unknown, prefix: PathSeg[]): RawVariable[] {
  let container: unknown = doc;
  for (const seg of prefix)
    container =
      typeof container === 'object' && container !== null ? ownField(container, String(seg)) : undefined;
  return list.map((v, i) => ({
    name: String(v.name),
    value: v.value,
    type: v.type ?? null,
    domain: v.domain ?? null,
    description: v.description ?? null,
    where: { doc, path: [...prefix, i] },
    docItem: isList(container) ? container[i] : undefined,
  }));
}

export function planScope(loaded: LoadedRecipe, opts: BuildOptions): PlanScope {
  const { recipe, doc } = loaded;
  const wf = recipe.workflow;
  const workflow = String(wf.name);
  const workspaceDir = resolve(opts.workspaceDir);
  const outputDir = resolve(workspaceDir, opts.outputDir ?? 'sflow_output');
  // the run folder's name goes through the one folder-name sanitiser (`../../x` stays inside)
  const runDir = opts.dryRun
    ? join(outputDir, '_dry_run', folderName(workflow))
    : join(outputDir, folderName(opts.runId));

  // 1. global variables
  const globals = resolveVariables(rawVariables(recipe.variables ?? [], doc, ['variables']), new Map(), {});
  const globalScope = variableScope(globals);

  // 2. backends
  const backendItems = (recipe.backends ?? []).map((item, i) => ({
    item,
    where: { doc, path: ['backends', i] },
  }));
  const backends = planBackends(backendItems, globalScope, opts.catalog, opts.topology, workflow);
  const workflowNs = { name: workflow };

  // 3. artifacts
  const artScope = variableScope(globals, { backends: backendsNamespace(backends), workflow: workflowNs });
  const artifacts = (recipe.artifacts ?? []).map((a, i) =>
    planArtifact(a, artScope, { doc, path: ['artifacts', i] }, { workspaceDir, runDir }),
  );

  // 4. workflow variables
  const extras: Scope = {
    backends: backendsNamespace(backends),
    artifacts: artifactsNamespace(artifacts),
    workflow: workflowNs,
  };
  const vars = resolveVariables(
    rawVariables(wf.variables ?? [], doc, ['workflow', 'variables']),
    globals,
    extras,
  );
  return {
    workflow,
    paths: { workspaceDir, outputDir, runDir },
    globals,
    vars,
    backends,
    artifacts,
    scope: variableScope(vars, extras),
  };
}
