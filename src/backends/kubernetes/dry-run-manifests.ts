/**
 * What `--dry-run` shows of a Kubernetes task: the pod manifests a launch sends, as YAML, built by
 * the very functions the launch uses (prepareTaskPods, mergedPod) — volumes, host network and
 * IPC, /dev/shm, resources, tolerations, node selection, labels. What only a run knows is the
 * dry-run's: object names carry this plan's run id, pods are pinned to the placeholder nodes,
 * the `sflow/driver` annotation names a placeholder, RDMA devices found on the nodes are not
 * added, and the env Secret (values never printed) and script ConfigMap are named, not shown.
 */
import { stringify } from 'yaml';
import type { PlannedBackend, Plan, PlannedTask } from '../../plan/types.js';
import { plannedArtifacts } from './artifacts.js';
import { mpiSettings } from './mpi-pods.js';
import { mergedPod } from './merged-pods.js';
import { mergedPodName, runNames } from './names.js';
import type { ManifestContext } from './pod-manifest.js';
import { k8sSettings, type K8sCliOptions } from './settings.js';
import { prepareTaskPods } from './task-pods.js';

const DRIVER = '<host>:<pid>:<start> of the run';
const INDENT = '        ';

function yamlLines(o: unknown): string[] {
  return stringify(o, { lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .map((l) => INDENT + l);
}

/** For each task of `b`: the lines that show its pod manifests. */
export function dryRunManifests(
  plan: Pick<Plan, 'runId' | 'tasks' | 'artifacts'>,
  b: PlannedBackend<'kubernetes'>,
  options: K8sCliOptions = {},
): (t: PlannedTask) => string[] {
  const settings = k8sSettings(b, options);
  const run = runNames(plan.runId);
  const manifest: ManifestContext = {
    settings,
    run,
    backend: b.name,
    namespace: settings.namespace,
    driver: DRIVER,
  };
  const notes: string[] = [];
  const r = {
    settings,
    run,
    backend: b.name,
    api: { namespace: settings.namespace },
    log: (m: string) => notes.push(m),
  };
  const channel = settings.computeDomain.channel;
  const artifacts = plannedArtifacts(r, plan.artifacts);
  const shownGroups = new Set<string>();
  return (t) => {
    if (t.backend !== b.name) return [];
    notes.length = 0;
    const out: string[] = [];
    if (t.colocated) {
      const c = t.colocated;
      if (shownGroups.has(c.group)) return [`      pod manifest: the merged pod of ${c.group} (above)`];
      shownGroups.add(c.group);
      const name = mergedPodName(run, c.group);
      out.push(
        `      pod manifest (merged pod of ${c.members.join(', ')}; as sent at the first member's launch):`,
      );
      out.push(...yamlLines(mergedPod(manifest, t, name, artifacts, (m) => notes.push(m))));
    } else {
      const p = prepareTaskPods(
        {
          r,
          manifest,
          rdma: { hcas: [], gkeNetworks: [] },
          channel: channel && channel !== 'auto' ? channel : undefined,
          mpiKey: () => '<made at launch>',
        },
        { task: t, attempt: 1, specs: t.launch },
        artifacts,
      );
      const route = t.operator.type === 'k8s_mpi' ? mpiSettings(t.operator.config).route : undefined;
      const via =
        route && route !== 'pods'
          ? `; the pods route: where the cluster serves MPIJobs (mpi.route: ${route}) an MPIJob is sent with these pods as its launcher and worker templates`
          : '';
      out.push(
        `      pod manifest${p.pods.length > 1 ? `s (${p.pods.length}, one per node)` : ''} (attempt 1, as sent; env from Secret ${p.secret?.metadata?.name ?? '-'}, script from ConfigMap ${p.configMap.metadata?.name}${via}):`,
      );
      for (const pod of p.pods) {
        if (p.pods.length > 1) out.push(`${INDENT}---`);
        out.push(...yamlLines(pod));
      }
    }
    for (const n of notes) out.push(`      ⚠ ${n}`);
    return out;
  };
}
