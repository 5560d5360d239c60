/**
 * The Kubernetes backend's plan refinement (backends.md §5.3): every task names a `k8s` or
 * `k8s_mpi` operator; and merge-pod — with `merge_colocated_gpu_pods` auto/on (the default),
 * single-node `k8s` GPU tasks the planner put on the same node with the same image share one pod
 * (CPU-only, multi-node, `k8s_mpi` and retried tasks keep their own). Each member sees the pod's
 * GPUs with its own first in CUDA_VISIBLE_DEVICES. A member's direct `depends_on` on another
 * member becomes an in-pod gate (`gatedOn`); a member that reaches another member only through a
 * task outside the pod is a plan error.
 */
import type { PlannedTask, RefineInput, RefineTools } from '../../plan/types.js';
import { k8sSettings } from './settings.js';
import { runNames, taskPodNames } from './names.js';
import { k8sOperatorConfig } from './operator-config.js';

const K8S_OPERATORS = ['k8s', 'k8s_mpi'];

function mergeable(t: PlannedTask): boolean {
  return (
    t.operator.type === 'k8s' &&
    t.nodes.length === 1 &&
    (t.gpuSlots?.length ?? 0) > 0 &&
    (t.retries?.count ?? 0) === 0
  );
}

export function refineKubernetesPlan(input: RefineInput<'kubernetes'>, tools: RefineTools): void {
  mergeGroups(input, tools);
  // the pods each task's first attempt will run as (after merging: members share their pod's)
  const run = runNames(input.runId);
  for (const t of input.tasks)
    t.engineNames = {
      // k8s_mpi: the MPIJob route (chosen at run time) lets the MPI operator name the pods
      what: t.operator.type === 'k8s_mpi' ? 'pods (pods route)' : 'pods',
      names: taskPodNames(run, t, 1),
    };
}

function mergeGroups(input: RefineInput<'kubernetes'>, tools: RefineTools): void {
  const { backend, tasks, all } = input;
  for (const t of tasks) {
    if (!K8S_OPERATORS.includes(t.operator.type)) {
      tools.fail(
        t.name,
        ['operator'],
        'plan.k8s_operator',
        `task '${t.base}' runs on the Kubernetes backend '${backend.name}' with operator '${t.operator.name}' (${t.operator.type}); on Kubernetes every task names a k8s or k8s_mpi operator, which carries the pod's image`,
        'add an operator `{name: …, type: k8s, image: …}` and set `operator:` on the task',
      );
    }
  }
  const notes: string[] = [];
  const settings = k8sSettings(backend);
  if (!settings.merge) {
    backend.notes = ['merge_colocated_gpu_pods: off (every task has its own pod)'];
    return;
  }
  const groups = new Map<string, PlannedTask[]>();
  for (const t of tasks.filter(mergeable)) {
    const key = `${t.nodes[0].name}\u0000${String(k8sOperatorConfig(t.operator).image ?? '')}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const byName = new Map(all.map((t) => [t.name, t]));
  let k = 0;
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const group = `g${++k}`;
    const names = new Set(members.map((m) => m.name));
    for (const m of members) checkNoDetour(m, names, byName, tools);
    const union = [...new Set(members.flatMap((m) => m.gpuSlots ?? []))].sort((a, b) => a - b);
    for (const m of members) {
      const own = (m.gpuSlots ?? []).map((g) => union.indexOf(g));
      const visible = [...own, ...union.map((_, i) => i).filter((i) => !own.includes(i))].join(',');
      const gatedOn = m.dependsOn.filter((d) => names.has(d));
      m.env.CUDA_VISIBLE_DEVICES = visible;
      for (const spec of m.launch) spec.env.CUDA_VISIBLE_DEVICES = visible;
      m.colocated = {
        group,
        members: members.map((x) => x.name),
        gatedOn: [...new Set(gatedOn)],
        launch: members.map((x) => x.launch[0]),
        gpus: union.length,
      };
    }
    const gated = members.filter((m) => m.colocated!.gatedOn.length);
    notes.push(
      `merged pod ${group} on ${members[0].nodes[0].name} (${union.length} GPU(s)): ${members.map((m) => m.name).join(', ')}` +
        (gated.length
          ? `; in-pod gates: ${gated.map((m) => `${m.name} ← ${m.colocated!.gatedOn.join(', ')}`).join('; ')}`
          : ''),
    );
  }
  if (notes.length) backend.notes = notes;
}

/**
 * a member that reaches another member of its pod only through a task outside the pod: plan error
 * (a member it also depends on directly is gated in the pod, so that is fine)
 */
function checkNoDetour(
  m: PlannedTask,
  members: Set<string>,
  byName: Map<string, PlannedTask>,
  tools: RefineTools,
): void {
  const seen = new Set<string>();
  const direct = new Set(m.dependsOn);
  const walk = (name: string, via: string | undefined): void => {
    for (const d of byName.get(name)?.dependsOn ?? []) {
      const key = `${d}\u0000${via ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (members.has(d)) {
        // a direct edge as well is an in-pod gate: the detour through `via` only adds a wait
        if (via && !direct.has(d)) {
          tools.fail(
            m.name,
            ['depends_on'],
            'plan.merge_pod_detour',
            `task '${m.name}' shares a merged pod with '${d}' but reaches it only through '${via}', which runs outside the pod; an in-pod gate can only wait for a member of the same pod`,
            `make '${m.name}' depend on '${d}' directly, or set merge_colocated_gpu_pods: off on the backend`,
          );
        }
        continue; // a member: its own gates cover what lies behind it
      }
      walk(d, via ?? d);
    }
  };
  walk(m.name, undefined);
}
