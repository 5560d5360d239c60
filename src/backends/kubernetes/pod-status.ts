/**
 * What sflow reads from a pod's status (the watch's cache): where it runs, its phase, how it ended,
 * and when its container started and ended.
 */
import type * as k8s from '@kubernetes/client-node';

export interface PodState {
  phase: string;
  node?: string;
  hostIP?: string;
  /** the main container runs (or ran) its command */
  started: boolean;
  /** the main container (or the pod) has ended */
  terminated: boolean;
  exitCode: number | null;
  signal: string | null;
  /** why the container or the pod cannot start (image pull, config, unschedulable) */
  problem?: string;
  /** the scheduler cannot place it yet */
  unschedulable?: string;
  deleting: boolean;
  /** the container's startedAt / finishedAt (ms; Kubernetes gives whole seconds) */
  startedAt?: number;
  finishedAt?: number;
}

/** an API timestamp in ms (undefined when absent or not a time) */
function apiTime(v: Date | string | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  const ms = v instanceof Date ? v.getTime() : Date.parse(v);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'CrashLoopBackOff',
]);

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

export function podState(pod: k8s.V1Pod | undefined, container = 'main'): PodState {
  const st = pod?.status;
  const cs = st?.containerStatuses?.find((c) => c.name === container) ?? st?.containerStatuses?.[0];
  const term = cs?.state?.terminated;
  const waiting = cs?.state?.waiting;
  const phase = st?.phase ?? 'Pending';
  const sched = st?.conditions?.find((c) => c.type === 'PodScheduled');
  const out: PodState = {
    phase,
    ...(pod?.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
    ...(st?.hostIP ? { hostIP: st.hostIP } : {}),
    started: Boolean(cs?.state?.running || term),
    terminated: Boolean(term) || phase === 'Succeeded' || phase === 'Failed',
    exitCode: term ? term.exitCode : null,
    signal: term?.signal ? (SIGNALS[term.signal] ?? `signal ${term.signal}`) : null,
    deleting: Boolean(pod?.metadata?.deletionTimestamp),
  };
  const startedAt = apiTime(cs?.state?.running?.startedAt ?? term?.startedAt);
  const finishedAt = apiTime(term?.finishedAt);
  if (startedAt !== undefined) out.startedAt = startedAt;
  if (finishedAt !== undefined) out.finishedAt = finishedAt;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
    out.problem = `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
  if (!out.terminated && phase === 'Failed') out.problem = st?.message ?? st?.reason ?? 'pod failed';
  if (phase === 'Failed' && !term)
    out.problem = `${st?.reason ?? 'Failed'}: ${st?.message ?? 'the pod failed before its container ran'}`;
  if (sched?.status === 'False') out.unschedulable = sched.message ?? sched.reason ?? 'unschedulable';
  return out;
}

/**
 * One end of an attempt on Kubernetes: the container's time, which the API gives in whole seconds
 * (`engine`), narrowed by the moment the driver saw the change (`seen`, the watch pushes it at
 * once): `seen` when it falls within that second, else the middle of the second. An engine time
 * with a fraction (not from a real API server) is taken as it is.
 */
export function refineTime(engine: number | undefined, seen: number | undefined): number | undefined {
  if (engine === undefined) return undefined;
  if (engine % 1000 !== 0) return engine;
  if (seen !== undefined && seen >= engine && seen < engine + 1000) return seen;
  return engine + 500;
}
