/**
 * A task pod's three layers (backends.md §5.2): sflow's manifest, then the operator's curated
 * fields, then `container_overrides` / `pod_overrides` deep-merged last — dicts by key, lists
 * replaced with a warning, capabilities unioned (IPC_LOCK stays), sflow's labels always win.
 */
import { describe, expect, it } from 'vitest';
import { runNames } from '../../../src/backends/kubernetes/names.js';
import { buildPod, type PodPlan } from '../../../src/backends/kubernetes/pod-manifest.js';
import { k8sSettings } from '../../../src/backends/kubernetes/settings.js';

const settings = k8sSettings({
  name: 'k8s',
  config: { name: 'k8s', type: 'kubernetes', namespace: 'ns1', nodes: 1 },
  nodes: [],
});
const ctx = {
  settings,
  run: runNames('wf-20261201-000000-abcdef'),
  backend: 'k8s',
  namespace: 'ns1',
  driver: 'h:1:0',
};
const plan: PodPlan = {
  name: 'sf-t-0',
  role: 'task',
  task: 't',
  attempt: 1,
  node: 'node-3',
  nodeIndex: 0,
  image: 'img:1',
  command: ['bash', '/sflow/run/task.sh'],
  env: [{ name: 'SFLOW_TASK_NODE_INDEX', value: '0' }],
  envSecret: 'sf-t-env',
  scriptConfigMap: 'sf-t-script',
  gpus: 2,
  rdma: { env: {}, capabilities: ['IPC_LOCK'], resources: {}, volumes: [], mounts: [] },
};

function build(op: Record<string, unknown>) {
  const warnings: string[] = [];
  const pod = buildPod(ctx, { image: 'img:1', ...op }, plan, (m) => warnings.push(m));
  return { pod, spec: pod.spec!, c: pod.spec!.containers[0], warnings };
}

describe('Kubernetes pod manifest layers', () => {
  it("sflow's manifest: pinned, Never, GPUs as a device-plugin limit, script and env from objects", () => {
    const { pod, spec, c } = build({});
    expect(pod.metadata!.namespace).toBe('ns1');
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.nodeSelector).toEqual({ 'kubernetes.io/hostname': 'node-3' });
    expect(c.resources!.limits).toMatchObject({ 'nvidia.com/gpu': '2' });
    expect(c.envFrom).toEqual([{ secretRef: { name: 'sf-t-env' } }]);
    expect(spec.volumes).toContainEqual({
      name: 'sflow-run',
      configMap: { name: 'sf-t-script', defaultMode: 0o755 },
    });
  });

  it('curated operator fields map onto the container and the pod', () => {
    const { spec, c } = build({
      image_pull_secrets: ['regcred'],
      image_pull_policy: 'IfNotPresent',
      service_account: 'runner',
      run_as_root: true,
      shm_size: '16Gi',
      cpu: 4,
      memory: '8Gi',
      cpu_limit: 8,
      memory_limit: '16Gi',
      env: [
        { name: 'MODE', value: 'fast' },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      ],
      restart: 'OnFailure',
      host_network: false,
      node_selector: { pool: 'a100' },
      working_dir: '/work',
      runtime_class: 'nvidia',
      priority_class: 'high',
      termination_grace_period: 60,
      labels: { team: 'ml', 'sflow/run': 'hijack' },
      annotations: { note: 'x' },
    });
    expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(spec.serviceAccountName).toBe('runner');
    expect(c.securityContext).toMatchObject({ runAsUser: 0, runAsGroup: 0 });
    expect(spec.volumes).toContainEqual({ name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '16Gi' } });
    expect(c.resources).toMatchObject({
      requests: { cpu: '4', memory: '8Gi' },
      limits: { cpu: '8', memory: '16Gi', 'nvidia.com/gpu': '2' },
    });
    expect(c.env).toContainEqual({ name: 'MODE', value: 'fast' });
    expect(c.env).toContainEqual({ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } });
    expect(spec.restartPolicy).toBe('OnFailure');
    expect(spec.hostNetwork).toBeUndefined();
    // the operator's selector merges in; the hostname pin stays
    expect(spec.nodeSelector).toEqual({ pool: 'a100', 'kubernetes.io/hostname': 'node-3' });
    expect(c.workingDir).toBe('/work');
    expect([spec.runtimeClassName, spec.priorityClassName, spec.terminationGracePeriodSeconds]).toEqual([
      'nvidia',
      'high',
      60,
    ]);
  });

  it("sflow's own labels win over the operator's and over pod_overrides", () => {
    const { pod } = build({
      labels: { team: 'ml', 'sflow/run': 'hijack' },
      pod_overrides: { metadata: { labels: { 'sflow/task': 'other', extra: 'yes' } } },
    });
    expect(pod.metadata!.labels).toMatchObject({ team: 'ml', extra: 'yes', 'sflow/task': 't' });
    expect(pod.metadata!.labels!['sflow/run']).toBe(ctx.run.label);
  });

  it('security_context deep-merges and keeps IPC_LOCK (capabilities are unioned)', () => {
    const { c } = build({
      security_context: { capabilities: { add: ['SYS_PTRACE'] }, readOnlyRootFilesystem: true },
    });
    expect(c.securityContext!.capabilities!.add).toEqual(['IPC_LOCK', 'SYS_PTRACE']);
    expect(c.securityContext!.readOnlyRootFilesystem).toBe(true);
  });

  it('overrides are merged last: dicts by key, lists replaced with a warning', () => {
    const { spec, c, warnings } = build({
      cpu: 4,
      container_overrides: {
        resources: { requests: { cpu: '2' } },
        volumeMounts: [{ name: 'x', mountPath: '/x' }],
      },
      pod_overrides: { spec: { restartPolicy: 'Always', schedulerName: 'gang' } },
    });
    expect(c.resources!.requests!.cpu).toBe('2');
    expect(c.resources!.limits).toMatchObject({ 'nvidia.com/gpu': '2' });
    expect(c.volumeMounts).toEqual([{ name: 'x', mountPath: '/x' }]);
    expect(warnings.join('\n')).toMatch(
      /container_overrides\.volumeMounts: the list sflow built \(\d+ entries\) is replaced/,
    );
    expect(spec.restartPolicy).toBe('Always');
    expect(spec.schedulerName).toBe('gang');
  });
});
