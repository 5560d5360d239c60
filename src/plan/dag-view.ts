/** Plan → the graph view the DAG exporters (visualize, dry-run drawing) consume. */
import type { DagView } from '../visualize/dag-view.js';
import type { Plan } from './types.js';

export function planToDagView(plan: Plan): DagView {
  const byName = new Map(plan.tasks.map((t) => [t.name, t]));
  return {
    workflow: plan.workflow,
    nodes: plan.tasks.map((t) => ({
      id: t.name,
      label: t.name,
      ...(t.replicaCount > 1 || t.name !== t.base ? { group: t.base } : {}),
      ...(t.policy === 'sequential' ? { sequential: true } : {}),
      ...(t.gpus && t.gpus.length ? { gpus: t.gpus.length * Math.max(1, t.nodes.length) } : {}),
    })),
    edges: plan.tasks.flatMap((t) =>
      t.dependsOn.map((d) => ({
        from: d,
        to: t.name,
        label:
          (byName.get(d)?.probes.readiness.length ?? 0) > 0 ? ('Ready' as const) : ('Completed' as const),
      })),
    ),
  };
}
