import type { PlacementRequest, TaskPlacement, TopologyNode } from '../../../src/plan/placement/index.js';
import { planPlacement } from '../../../src/plan/placement/index.js';
import { SflowError } from '../../../src/config/errors.js';
import type { PlacementError } from '../../../src/plan/placement/errors.js';
import { kubernetesKind } from '../../../src/backends/kubernetes/kind.js';
import { slurmKind } from '../../../src/backends/slurm/kind.js';

/** placement traits of a Slurm and a Kubernetes backend, from the registry */
export const SLURM = slurmKind.capabilities;
export const K8S = kubernetesKind.capabilities;

/** `k` nodes with `g` GPUs each (null = unknown), named `prefix0…` unless names are given */
export function board(k: number, g: number | null, names?: string[]): TopologyNode[] {
  return Array.from({ length: k }, (_, i) => ({
    name: names?.[i] ?? `n${i}`,
    ip: `10.0.0.${i + 1}`,
    index: i,
    numGpus: g,
  }));
}

export function caps(list: (number | null)[], names?: string[]): TopologyNode[] {
  return list.map((c, i) => ({ name: names?.[i] ?? `n${i}`, ip: `10.0.0.${i + 1}`, index: i, numGpus: c }));
}

type TaskOpts = Partial<Omit<PlacementRequest, 'task'>> & { replicas?: number };

/** one declared task, expanded into replicas `<name>_<i>` when `replicas` is given */
export function task(name: string, opts: TaskOpts = {}): PlacementRequest[] {
  const { replicas, ...rest } = opts;
  const base: PlacementRequest = {
    task: name,
    base: name,
    backend: 'b',
    engine: SLURM,
    replicaIndex: 0,
    policy: 'parallel',
    hasReadiness: false,
    dependsOn: [],
    ...rest,
  };
  if (replicas === undefined) return [base];
  return Array.from({ length: replicas }, (_, i) => ({ ...base, task: `${name}_${i}`, replicaIndex: i }));
}

export function plan(nodes: TopologyNode[], ...tasks: PlacementRequest[][]): Record<string, TaskPlacement> {
  const placements = planPlacement(tasks.flat(), { b: nodes });
  return Object.fromEntries(placements.map((p) => [p.task, p]));
}

/** node names and GPU list of one placement, compact for assertions */
export function where(p: TaskPlacement): { nodes: string[]; gpus: number[] | null } {
  return { nodes: p.nodes.map((n) => n.name), gpus: p.gpus };
}

export function planError(nodes: TopologyNode[], ...tasks: PlacementRequest[][]): SflowError {
  try {
    plan(nodes, ...tasks);
  } catch (e) {
    if (e instanceof SflowError) return e;
    throw e;
  }
  throw new Error('expected a plan error');
}

/** the placement error `f` throws (an error of the test when it throws none) */
export function fails(f: () => unknown): PlacementError {
  try {
    f();
  } catch (e) {
    return e as PlacementError;
  }
  throw new Error('expected a placement error');
}
