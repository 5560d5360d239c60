/**
 * What every part of one run's Kubernetes backend shares: the API client pinned to the namespace,
 * the run's pod watch, the settings, the run's names and labels, and the metadata every object
 * carries (labels for deletion by run, the driver that made it for reaping after a crash).
 */
import type * as k8s from '@kubernetes/client-node';
import { driverId } from '../driver-identity.js';
import type { KubeApi } from './client.js';
import { A_DRIVER, A_RUN_ID, runLabels, selector, type Role, type RunNames } from './names.js';
import type { PodWatch } from './pod-watch.js';
import type { K8sSettings } from './settings.js';

export interface K8sRun {
  api: KubeApi;
  watch: PodWatch;
  settings: K8sSettings;
  run: RunNames;
  backend: string;
  /** driver-side messages (the console shows them as warnings) */
  log(message: string, level?: 'info' | 'warning'): void;
}

export function objectMeta(
  r: K8sRun,
  name: string,
  role: Role,
  labels: Record<string, string> = {},
): k8s.V1ObjectMeta {
  return {
    name,
    namespace: r.api.namespace,
    labels: { ...runLabels(r.run, r.backend, role), ...labels },
    annotations: { [A_DRIVER]: driverId(), [A_RUN_ID]: r.run.runId },
  };
}

export const runSelector = (r: K8sRun, more: Record<string, string> = {}): string => selector(r.run, more);
