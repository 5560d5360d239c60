/**
 * The Kubernetes backend against the emulator: planned backends and contexts pointing at an
 * emulator's kubeconfig, and the objects of a run left in the namespace.
 */
import type { BackendContext } from '../../../src/backends/backend.js';
import { kubernetesKind } from '../../../src/backends/kubernetes/kind.js';
import { KubernetesBackend } from '../../../src/backends/kubernetes/kubernetes-backend.js';
import type { BackendConfig, PlannedBackend } from '../../../src/plan/types.js';
import type { Emulator } from '../../fixtures/k8s-emulator/server.js';

export function k8sPlanned(
  config: Partial<BackendConfig<'kubernetes'>> = {},
  name = 'k8s',
): PlannedBackend<'kubernetes'> {
  return {
    name,
    type: 'kubernetes',
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: { name, type: 'kubernetes', namespace: 'default', nodes: 1, gpus_per_node: 0, ...config },
    capabilities: kubernetesKind.capabilities,
  };
}

export function k8sCtx(emu: Emulator, over: Partial<BackendContext> = {}): BackendContext {
  return {
    runId: `t-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    runDir: '',
    log: () => undefined,
    options: { kubeconfig: emu.kubeconfigPath },
    env: { ...process.env, SFLOW_K8S_WAIT_HEARTBEAT_SECS: '1' },
    gpuTasks: false,
    ...over,
  };
}

export function k8sBackend(
  emu: Emulator,
  config: Partial<BackendConfig<'kubernetes'>> = {},
  over: Partial<BackendContext> = {},
): KubernetesBackend {
  return new KubernetesBackend(k8sPlanned(config), k8sCtx(emu, over));
}

/** every object in the namespace whose `sflow/run` label is `run` (all runs when absent) */
export function leftovers(emu: Emulator, namespace = 'default', runLabel?: string): string[] {
  const out: string[] = [];
  for (const kind of ['pods', 'configmaps', 'secrets', 'mpijobs.kubeflow.org']) {
    for (const o of emu.store.list(kind, namespace) as Array<{
      metadata: { name: string; labels?: Record<string, string> };
    }>) {
      const l = o.metadata.labels ?? {};
      if (l['app.kubernetes.io/managed-by'] !== 'sflow') continue;
      if (runLabel && l['sflow/run'] !== runLabel) continue;
      out.push(`${kind}/${o.metadata.name}`);
    }
  }
  return out;
}
