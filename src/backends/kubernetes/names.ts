/**
 * Object and label names of a run on Kubernetes (backends.md §5.4 leaves them open; chosen here).
 *
 *   labels   app.kubernetes.io/managed-by=sflow, sflow/run=<run label>, sflow/backend=<name>,
 *            sflow/role=reservation|task|probe|merged|mpi-launcher|mpi-worker,
 *            sflow/task=<task label>, sflow/attempt=<n>, sflow/node-index=<i>
 *   pods     sf-<task>-<run hash>-a<attempt>-<i>        (one per node of the task)
 *            sf-resv-<run hash>-<i>                     (reservation placeholders)
 *            sf-probe-<run hash>                        (the in-cluster probe pod)
 *            sf-mrg-<run hash>-<group>                  (a merged pod)
 *   objects  <pod base>-script (ConfigMap), <pod base>-env (Secret), sf-art-<run hash> (ConfigMap)
 *
 * Every name is a DNS-1123 label (≤ 63 characters, so a pod name is also a valid hostname); a
 * task name that does not fit is cut and keeps a short hash so that two long names never collide.
 * The run label is the value every deletion selects on.
 */
import { createHash } from 'node:crypto';

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const L_RUN = 'sflow/run';
export const L_BACKEND = 'sflow/backend';
export const L_ROLE = 'sflow/role';
export const L_TASK = 'sflow/task';
export const L_ATTEMPT = 'sflow/attempt';
export const L_NODE = 'sflow/node-index';
/** annotation: `<host>:<pid>:<start time>` of the driver that created the object (stale-run reaping) */
export const A_DRIVER = 'sflow/driver';
/** annotation: the run id as written (label values are cut to 63 characters) */
export const A_RUN_ID = 'sflow/run-id';

export type Role = 'reservation' | 'task' | 'probe' | 'merged' | 'mpi-launcher' | 'mpi-worker';

export const shortHash = (s: string, n = 8): string =>
  createHash('sha256').update(s).digest('hex').slice(0, n);

/** lower-case DNS label characters, no leading/trailing dash */
function dns(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/** `s` made a DNS label of at most `max` characters; a cut or changed name keeps a hash of the original */
export function dnsPart(s: string, max: number): string {
  const clean = dns(s) || 'x';
  if (clean.length <= max && clean === s) return clean;
  const h = shortHash(s, 5);
  return `${clean.slice(0, Math.max(1, max - 6)).replace(/-$/, '')}-${h}`;
}

/** A label value (≤ 63, alphanumerics at both ends, `-_.` inside) for any text. */
export function labelValue(s: string): string {
  const clean = s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  if (clean.length <= 63 && clean === s && clean !== '') return clean;
  const h = shortHash(s, 8);
  return `${clean.slice(0, 54).replace(/[^A-Za-z0-9]+$/, '')}-${h}`.replace(/^-/, 'x-');
}

export interface RunNames {
  runId: string;
  /** 8 hex characters of the run id: part of every object name */
  hash: string;
  /** the value of the `sflow/run` label */
  label: string;
}

export function runNames(runId: string): RunNames {
  return { runId, hash: shortHash(runId), label: labelValue(runId) };
}

/** `sf-<task>-<hash>-a<attempt>` (pods add `-<i>`, objects `-script` / `-env`) */
export function attemptBase(run: RunNames, task: string, attempt: number): string {
  const tail = `-${run.hash}-a${attempt}`;
  return `sf-${dnsPart(task, 63 - 3 - tail.length - 7)}${tail}`;
}

export const podName = (base: string, node: number): string => `${base}-${node}`;
export const reservationName = (run: RunNames, i: number): string => `sf-resv-${run.hash}-${i}`;
export const probePodName = (run: RunNames): string => `sf-probe-${run.hash}`;
export const artifactsName = (run: RunNames): string => `sf-art-${run.hash}`;
export const mergedPodName = (run: RunNames, group: string): string =>
  `sf-mrg-${run.hash}-${dnsPart(group, 63 - 16)}`;

/** `sflow/run=<label>` plus more `key=value` pairs */
export function selector(run: RunNames, more: Record<string, string> = {}): string {
  return [`${L_RUN}=${run.label}`, ...Object.entries(more).map(([k, v]) => `${k}=${v}`)].join(',');
}

export function runLabels(run: RunNames, backend: string, role: Role): Record<string, string> {
  return { [MANAGED_BY]: 'sflow', [L_RUN]: run.label, [L_BACKEND]: labelValue(backend), [L_ROLE]: role };
}

export function taskLabels(
  run: RunNames,
  backend: string,
  role: Role,
  task: string,
  attempt: number,
): Record<string, string> {
  return { ...runLabels(run, backend, role), [L_TASK]: labelValue(task), [L_ATTEMPT]: String(attempt) };
}

/**
 * The pods of one attempt of a task (what the launch creates): its merged pod's, or one per node
 * (`k8s_mpi` plans one launch spec but runs a pod per node on its pods route).
 */
export function taskPodNames(
  run: RunNames,
  t: {
    name: string;
    operator: { type: string };
    launch: unknown[];
    nodes: unknown[];
    colocated?: { group: string };
  },
  attempt: number,
): string[] {
  if (t.colocated) return [mergedPodName(run, t.colocated.group)];
  const n =
    t.operator.type === 'k8s_mpi' && t.launch.length === 1 ? Math.max(1, t.nodes.length) : t.launch.length;
  const base = attemptBase(run, t.name, attempt);
  return Array.from({ length: Math.max(1, n) }, (_, i) => podName(base, i));
}
