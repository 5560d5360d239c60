/**
 * Phases 5b–6 of the plan: the task graph (cycle check, concrete edges) and placement of every
 * concrete task on its backend's nodes. A placement error names its task and `resources` field;
 * it is located in the recipe from those, never from the message text.
 */
import { locate, type PathSeg } from '../config/source.js';
import { SflowError } from '../util/sflow-error.js';
import { concreteDependencies, cycleError, findCycle, type BaseTask } from './dag.js';
import { planPlacement } from './placement/index.js';
import { PlacementError } from './placement/errors.js';
import type { PlacementRequest, TaskPlacement } from './placement/types.js';
import type { Draft } from './task-draft.js';
import type { PlannedBackend, PlannedNode } from './types.js';

/** Concrete dependencies of every concrete task; a cycle is a located plan error. */
export function taskGraph(drafts: Draft[], doc: unknown): Map<string, string[]> {
  const baseTasks: BaseTask[] = drafts.map((d) => ({
    name: d.base,
    dependsOn: (d.item.depends_on ?? []).filter((x) => x !== undefined),
    policy: d.expansion.policy,
    instances: d.expansion.instances.map((x) => x.name),
  }));
  const cycle = findCycle(baseTasks);
  if (cycle) {
    const i = drafts.findIndex((d) => d.base === cycle[0]);
    throw cycleError(baseTasks, cycle, locate(doc, ['workflow', 'tasks', i, 'depends_on']));
  }
  return concreteDependencies(baseTasks);
}

export function placeTasks(
  drafts: Draft[],
  deps: Map<string, string[]>,
  backends: PlannedBackend[],
): Map<string, TaskPlacement<PlannedNode>> {
  const requests: PlacementRequest[] = [];
  for (const d of drafts) {
    for (const inst of d.expansion.instances) {
      requests.push({
        task: inst.name,
        base: d.base,
        backend: d.backend.name,
        engine: d.backend.capabilities,
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
  try {
    return new Map(planPlacement(requests, topology).map((p) => [p.task, p]));
  } catch (e) {
    throw locatePlacementError(e, requests, drafts);
  }
}

/** Points a placement error at the task's `resources` (or the named field under it) in the recipe. */
function locatePlacementError(e: unknown, requests: PlacementRequest[], drafts: Draft[]): unknown {
  if (!(e instanceof PlacementError) || e.location || e.task === undefined) return e;
  const req = requests.find((r) => r.task === e.task);
  const d = drafts.find((x) => x.base === (req?.base ?? e.task));
  if (!d) return e;
  const res = d.item.resources ?? {};
  const [named, field] = (e.field ?? '').split('.') as [string, string | undefined];
  const kind =
    named === 'nodes' || named === 'gpus' ? named : res.gpus ? 'gpus' : res.nodes ? 'nodes' : undefined;
  const path: PathSeg[] = [
    ...d.where.path,
    ...(kind && res[kind] ? ['resources', kind] : ['resources']),
    ...(kind && field && Object.entries(res[kind] ?? {}).some(([k, v]) => k === field && v !== undefined)
      ? [field]
      : []),
  ];
  return new SflowError(e.code, e.message, {
    phase: e.phase,
    hint: e.hint,
    details: e.details,
    location: locate(d.where.doc, path),
    cause: e,
  });
}
