/**
 * Node reservation (backends.md §5.5): one placeholder pod per node holds the node and its GPUs
 * until the run's task pods take them. Nodes are chosen from the cluster's node list when it can
 * be read (node_selector, include/exclude, taints against tolerations, Ready, enough allocatable
 * GPUs; by name), each placeholder pinned by `kubernetes.io/hostname`; when nodes cannot be read,
 * the placeholders go unpinned with a pod anti-affinity so each lands on its own node. All must
 * run within `reservation.timeout` (progress while they wait); the allocation then reports the
 * real node names, InternalIPs and GPU counts (`gpus_per_node`, else the node's allocatable).
 *
 * Hand-off: a placeholder holds GPUs a task pod on its node needs. `create_before_destroy`
 * creates the task pod (Pending), then deletes the placeholder; `destroy_before_create` deletes
 * it first (needed under a GPU ResourceQuota); `auto` picks the latter iff such a quota exists.
 * Once the task pod is bound, a smaller placeholder holds what the run's pods on the node do not
 * use. GPUs freed later by finished task pods are not held again.
 */
import type * as k8s from '@kubernetes/client-node';
import { SflowError } from '../../util/sflow-error.js';
import type { PlannedNode } from '../../plan/types.js';
import { apiMessage, apiStatus } from './client.js';
import { L_NODE, reservationName } from './names.js';
import { podState } from './pod-status.js';
import { objectMeta, runSelector, type K8sRun } from './run-context.js';
import type { Handoff } from './settings.js';

interface ReservedNode {
  index: number;
  name: string;
  ip: string;
  numGpus: number | null;
  /** GPUs the first placeholder held */
  target: number;
  /** GPUs the current placeholder holds (0: none) */
  held: number;
  /** GPUs of the run's live task pods on the node */
  live: number;
  placeholder: string | undefined;
  generation: number;
  chain: Promise<void>;
}

export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

function tolerated(taint: k8s.V1Taint, tolerations: k8s.V1Toleration[]): boolean {
  if (taint.effect === 'PreferNoSchedule') return true;
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

function allocatableGpus(n: k8s.V1Node, resource: string): number {
  const v = n.status?.allocatable?.[resource];
  return v === undefined ? 0 : Number.parseInt(v, 10) || 0;
}

export class Reservation {
  readonly nodes: ReservedNode[] = [];
  handoff: Exclude<Handoff, 'auto'> = 'create_before_destroy';
  private readonly podGpus = new Map<string, { node: string; gpus: number }>();

  constructor(
    private readonly r: K8sRun,
    private readonly gpuTasks: boolean,
  ) {}

  /** the GPU count a placeholder asks for on a node of `allocatable` GPUs */
  private holdOf(allocatable: number | null): number {
    if (this.r.settings.scheduling === 'dra') return 0;
    const declared = this.r.settings.gpusPerNode;
    if (declared !== null) return declared;
    return this.gpuTasks ? (allocatable ?? 0) : 0;
  }

  /** Reserves the nodes; resolves with the topology the plan places on. */
  async allocate(signal: AbortSignal, progress: (m: string) => void): Promise<PlannedNode[]> {
    const s = this.r.settings;
    this.handoff = s.reservation.handoff === 'auto' ? await this.autoHandoff(signal) : s.reservation.handoff;
    const listed = await this.candidates(signal);
    const deadline = Date.now() + s.reservation.timeoutS * 1000;
    const pending = new Map<number, { pod: string; node?: string; since: number }>();
    const spare = listed ? [...listed] : undefined;
    let created = 0;
    const create = async (i: number, node: k8s.V1Node | undefined) => {
      const name = `${reservationName(this.r.run, i)}${created++ >= s.nodes ? `-${created}` : ''}`;
      const alloc = node ? allocatableGpus(node, s.gpuResourceName) : null;
      await this.createPlaceholder(name, i, this.holdOf(alloc), node?.metadata?.name, signal);
      pending.set(i, {
        pod: name,
        ...(node?.metadata?.name ? { node: node.metadata.name } : {}),
        since: Date.now(),
      });
    };
    for (let i = 0; i < s.nodes; i++) await create(i, spare?.shift());
    const heartbeat = Number(process.env.SFLOW_K8S_WAIT_HEARTBEAT_SECS ?? 10) * 1000;
    let lastBeat = Date.now();
    const placed = new Map<number, k8s.V1Pod>();
    while (placed.size < s.nodes) {
      signal.throwIfAborted();
      for (const [i, p] of pending) {
        const pod = this.r.watch.get(p.pod);
        const st = podState(pod);
        if (st.phase === 'Running' && st.node) {
          placed.set(i, pod!);
          pending.delete(i);
        } else if (st.terminated || st.problem) {
          throw this.failure(`reservation pod ${p.pod} ${st.problem ?? `ended (${st.phase})`}`);
        } else if (st.unschedulable && p.node && spare?.length && Date.now() - p.since > 3_000) {
          // that node is busy: try the next candidate instead
          await this.deletePod(p.pod, signal);
          pending.delete(i);
          await create(i, spare.shift());
        }
      }
      if (placed.size === s.nodes) break;
      if (Date.now() > deadline) {
        const why = [...pending.values()].map((p) => `${p.pod}: ${this.describe(this.r.watch.get(p.pod))}`);
        throw this.failure(
          `${pending.size} of ${s.nodes} reservation pod(s) not running after ${s.reservation.timeoutS}s:\n  ${why.join('\n  ')}`,
          'free the nodes, lower `nodes`/`gpus_per_node`, or raise `reservation.timeout`',
        );
      }
      if (Date.now() - lastBeat >= heartbeat) {
        lastBeat = Date.now();
        const first = [...pending.values()][0];
        progress(
          `waiting for ${pending.size} of ${s.nodes} reservation pod(s)` +
            (first ? ` (${first.pod}: ${this.describe(this.r.watch.get(first.pod))})` : ''),
        );
      }
      await this.r.watch.waitFor(() => undefined, 1_000, signal);
    }
    const byName = new Map((listed ?? []).map((n) => [n.metadata?.name ?? '', n]));
    const out: PlannedNode[] = [];
    for (let i = 0; i < s.nodes; i++) {
      const pod = placed.get(i)!;
      const nodeName = pod.spec!.nodeName!;
      if (out.some((n) => n.name === nodeName)) {
        throw this.failure(
          `two reservation pods landed on node ${nodeName}`,
          'list nodes must be allowed, or the cluster must honour pod anti-affinity',
        );
      }
      const node = byName.get(nodeName);
      const alloc = node ? allocatableGpus(node, s.gpuResourceName) : null;
      const numGpus = s.gpusPerNode ?? alloc ?? null;
      if (numGpus === null && this.gpuTasks) {
        throw this.failure(
          `gpus_per_node is unset and node ${nodeName} cannot be read to find its GPUs`,
          'set gpus_per_node on the backend (needed when `get nodes` is denied)',
        );
      }
      const ip =
        node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ??
        pod.status?.hostIP ??
        nodeName;
      const held = this.holdOf(alloc);
      this.nodes.push({
        index: i,
        name: nodeName,
        ip,
        numGpus,
        target: held,
        held,
        live: 0,
        placeholder: pod.metadata!.name!,
        generation: 0,
        chain: Promise.resolve(),
      });
      out.push({ name: nodeName, ip, index: i, numGpus });
    }
    return out;
  }

  /**
   * Creates the task pods of one node (`create`), handing GPUs over from the node's placeholder
   * when it holds ones they need. Serialized per node; resolves once the pods were created.
   */
  async place(
    nodeName: string,
    gpus: number,
    create: () => Promise<string[]>,
    signal: AbortSignal,
  ): Promise<void> {
    const n = this.nodes.find((x) => x.name === nodeName);
    if (!n) {
      await create();
      return;
    }
    let created!: () => void;
    let failed!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => ((created = res), (failed = rej)));
    n.chain = n.chain.then(async () => {
      const keep = Math.max(0, n.target - n.live - gpus);
      let pods: string[];
      try {
        if (gpus === 0 || keep >= n.held || !n.placeholder) {
          pods = await create();
        } else if (this.handoff === 'destroy_before_create') {
          await this.dropPlaceholder(n, signal, true);
          pods = await create();
        } else {
          pods = await create();
          await this.dropPlaceholder(n, signal, false);
        }
      } catch (e) {
        failed(e);
        return;
      }
      n.live += gpus;
      for (const p of pods) this.podGpus.set(p, { node: n.name, gpus: gpus / Math.max(1, pods.length) });
      created();
      if (keep > 0 && !n.placeholder) await this.hold(n, keep, pods, signal).catch(() => undefined);
    });
    return done;
  }

  /** a task pod of the run ended: its GPUs no longer count on its node */
  podEnded(pod: string): void {
    const g = this.podGpus.get(pod);
    if (!g) return;
    this.podGpus.delete(pod);
    const n = this.nodes.find((x) => x.name === g.node);
    if (n) n.live = Math.max(0, n.live - g.gpus);
  }

  private async hold(n: ReservedNode, gpus: number, pods: string[], signal: AbortSignal): Promise<void> {
    // the new placeholder waits until the task pods were bound, or it could take their GPUs
    await this.r.watch.waitFor(
      () => (pods.every((p) => podState(this.r.watch.get(p)).node) ? true : undefined),
      60_000,
      signal,
    );
    const name = `${reservationName(this.r.run, n.index)}-g${++n.generation}`;
    await this.createPlaceholder(name, n.index, gpus, n.name, signal);
    n.placeholder = name;
    n.held = gpus;
  }

  private async dropPlaceholder(n: ReservedNode, signal: AbortSignal, wait: boolean): Promise<void> {
    const name = n.placeholder!;
    n.placeholder = undefined;
    n.held = 0;
    await this.deletePod(name, signal);
    if (wait) await this.r.watch.waitFor(() => (this.r.watch.get(name) ? undefined : true), 60_000, signal);
  }

  private async deletePod(name: string, signal: AbortSignal): Promise<void> {
    await this.r.api.maybe(
      'delete',
      'delete',
      'pods',
      name,
      (o) =>
        this.r.api.core.deleteNamespacedPod(
          { name, namespace: this.r.api.namespace, gracePeriodSeconds: 0 },
          o,
        ),
      { signal },
    );
  }

  private async createPlaceholder(
    name: string,
    index: number,
    gpus: number,
    node: string | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const s = this.r.settings;
    const affinity: k8s.V1Affinity = {};
    const terms: k8s.V1NodeSelectorRequirement[] = [];
    if (s.includeNodes.length)
      terms.push({ key: 'kubernetes.io/hostname', operator: 'In', values: s.includeNodes });
    if (s.excludeNodes.length)
      terms.push({ key: 'kubernetes.io/hostname', operator: 'NotIn', values: s.excludeNodes });
    if (terms.length)
      affinity.nodeAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: terms }] },
      };
    if (!node) {
      affinity.podAntiAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'sflow/run': this.r.run.label, 'sflow/role': 'reservation' } },
          },
        ],
      };
    }
    const limits = gpus > 0 ? { [s.gpuResourceName]: String(gpus) } : undefined;
    const body: k8s.V1Pod = {
      metadata: objectMeta(this.r, name, 'reservation', { [L_NODE]: String(index) }),
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        ...(Object.keys(s.nodeSelector).length || node
          ? { nodeSelector: { ...s.nodeSelector, ...(node ? { 'kubernetes.io/hostname': node } : {}) } }
          : {}),
        ...(s.tolerations.length ? { tolerations: s.tolerations } : {}),
        ...(Object.keys(affinity).length ? { affinity } : {}),
        containers: [
          {
            name: 'main',
            image: s.reservation.image,
            command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 5; done'],
            ...(limits ? { resources: { limits, requests: limits } } : {}),
          },
        ],
      },
    };
    await this.r.api.call(
      'write',
      'create',
      'pods',
      name,
      (o) =>
        this.r.api.core.createNamespacedPod(
          { namespace: this.r.api.namespace, body, ...this.r.api.create },
          o,
        ),
      { signal },
    );
  }

  /** nodes that fit, in name order; undefined when nodes cannot be read (a warning says so) */
  private async candidates(signal: AbortSignal): Promise<k8s.V1Node[] | undefined> {
    const s = this.r.settings;
    let nodes: k8s.V1Node[];
    try {
      nodes = (
        await this.r.api.call('read', 'list', 'nodes', undefined, (o) => this.r.api.core.listNode({}, o), {
          signal,
        })
      ).items;
    } catch (e) {
      signal.throwIfAborted();
      this.r.log(
        `Kubernetes backend '${this.r.backend}': cannot list nodes (${apiMessage(e)}); reservation pods are placed by the scheduler with a pod anti-affinity, node GPU counts need gpus_per_node`,
      );
      return undefined;
    }
    const need = s.scheduling === 'dra' ? 0 : (s.gpusPerNode ?? (this.gpuTasks ? 1 : 0));
    const reasons: string[] = [];
    const fit = nodes.filter((n) => {
      const name = n.metadata?.name ?? '';
      const labels = n.metadata?.labels ?? {};
      const why = (r: string) => (reasons.push(`${name}: ${r}`), false);
      if (s.includeNodes.length && !s.includeNodes.includes(name)) return why('not in include_nodes');
      if (s.excludeNodes.includes(name)) return why('in exclude_nodes');
      for (const [k, v] of Object.entries(s.nodeSelector))
        if (labels[k] !== v) return why(`node_selector ${k}=${v} does not match`);
      if (n.spec?.unschedulable) return why('cordoned');
      if (n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return why('not Ready');
      const taint = (n.spec?.taints ?? []).find((t) => !tolerated(t, s.tolerations));
      if (taint)
        return why(`taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} not tolerated`);
      const gpus = allocatableGpus(n, s.gpuResourceName);
      if (gpus < need) {
        if (s.gpusPerNode !== null && gpus > 0)
          this.r.log(
            `Kubernetes backend '${this.r.backend}': gpus_per_node=${s.gpusPerNode} is above node ${name}'s ${gpus} allocatable ${s.gpuResourceName}`,
          );
        return why(`${gpus} allocatable ${s.gpuResourceName}, ${need} needed`);
      }
      return true;
    });
    if (fit.length < s.nodes) {
      throw this.failure(
        `${s.nodes} node(s) requested, ${fit.length} of the cluster's ${nodes.length} fit:\n  ${reasons.slice(0, 12).join('\n  ')}`,
        'lower `nodes`, or change node_selector / include_nodes / exclude_nodes / tolerations / gpus_per_node',
      );
    }
    return fit.sort((a, b) => naturalCompare(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  }

  private async autoHandoff(signal: AbortSignal): Promise<Exclude<Handoff, 'auto'>> {
    const res = this.r.settings.gpuResourceName;
    try {
      const q = await this.r.api.call(
        'read',
        'list',
        'resourcequotas',
        undefined,
        (o) => this.r.api.core.listNamespacedResourceQuota({ namespace: this.r.api.namespace }, o),
        { signal },
      );
      const gpuQuota = q.items.some((x) =>
        Object.keys(x.spec?.hard ?? {}).some((k) => k === `requests.${res}` || k === res),
      );
      return gpuQuota ? 'destroy_before_create' : 'create_before_destroy';
    } catch (e) {
      signal.throwIfAborted();
      if (apiStatus(e) !== 403)
        this.r.log(`cannot list resource quotas (${apiMessage(e)}); GPU hand-off: create_before_destroy`);
      return 'create_before_destroy';
    }
  }

  private describe(pod: k8s.V1Pod | undefined): string {
    if (!pod) return 'not seen yet';
    const st = podState(pod);
    return st.unschedulable ? `Pending: ${st.unschedulable}` : (st.problem ?? st.phase);
  }

  private failure(message: string, hint?: string): SflowError {
    return new SflowError('k8s.reservation', `Kubernetes backend '${this.r.backend}': ${message}`, {
      phase: 'preflight',
      ...(hint ? { hint } : {}),
    });
  }
}

export const reservationSelector = (r: K8sRun): string => runSelector(r, { 'sflow/role': 'reservation' });
