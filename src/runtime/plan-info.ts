/** The static shape of a run for the `run_plan` event (summaries need nothing else). */
import type { Plan } from '../plan/types.js';
import type { PlanBackendInfo, PlanTaskInfo } from '../events/events.js';
import { describeProbe } from '../probes/probe-driver.js';

export function planInfo(plan: Plan): { tasks: PlanTaskInfo[]; backends: PlanBackendInfo[] } {
  return {
    tasks: plan.tasks.map((t) => ({
      name: t.name,
      base: t.base,
      backend: t.backend,
      dependsOn: [...new Set(t.dependsOn)],
      service: t.probes.readiness.length > 0,
      probes: [...t.probes.readiness, ...t.probes.failure].map((p) => ({
        role: p.role,
        kind: p.kind,
        target: describeProbe(p, t.name),
      })),
      retries: t.retries ? { ...t.retries } : null,
      nodes: t.nodes.map((n) => n.name),
      gpus: t.gpus,
      ...(t.gpuSlots?.length && !t.gpus?.length ? { enginePicksGpus: t.gpuSlots.length } : {}),
      logPath: t.logPath,
      outputDir: t.outputDir,
      ...(t.replicaCount > 1 || t.name !== t.base
        ? {
            replica: {
              index: t.replicaIndex,
              count: t.replicaCount,
              sequential: t.policy === 'sequential',
              sweep: t.sweep,
            },
          }
        : {}),
    })),
    backends: plan.backends.map((b) => ({
      name: b.name,
      type: b.type,
      synthetic: b.capabilities.syntheticNodes,
      nodes: b.nodes.map((n) => ({
        name: n.name,
        ip: n.ip,
        numGpus: n.numGpus,
        ...(n.gpuUuids?.length ? { gpuUuids: [...n.gpuUuids] } : {}),
      })),
    })),
  };
}
