/**
 * The `k8s_mpi` MPIJob route (backends.md §5.2): one Kubeflow `kubeflow.org/v2beta1` MPIJob per
 * attempt instead of the pods route's pods. Its Launcher and Worker pod templates are the pods
 * route's pods (same container, env Secret by `envFrom`, script ConfigMap, volumes, GPUs, labels
 * of the run, so the run's collection delete finds every pod the operator makes), and sflow keeps
 * its own SSH plumbing (the attempt's key in the env Secret, worker.sh's sshd on `ssh_port`, the
 * launcher's hostfile of the reserved nodes' addresses and its mpirun shim): the operator's
 * SSH Secret and /etc/mpi/hostfile are left unused, so the same recipe behaves the same on both
 * routes. The operator supplies the lifecycle: worker pods first, the launcher once they are
 * ready (`launcher_creation_policy`, default WaitForWorkersReady), its pods deleted with it.
 *
 * Pinning: the launcher keeps node 0's `kubernetes.io/hostname` nodeSelector; the one Worker
 * template cannot name a node per replica, so it is restricted to the other reserved nodes by a
 * required node affinity and spread one per node by a required pod anti-affinity on the job's
 * worker label. A worker learns its address from the downward API (`status.hostIP`: the pods
 * run with the host network) instead of its node index. The worker's readiness probe (TCP on
 * `ssh_port`, every 5 s, `ceil(worker_setup_timeout_seconds / 5)` failures) is what
 * WaitForWorkersReady waits on.
 */
import type * as k8s from '@kubernetes/client-node';
import type { MpiSettings } from './mpi-pods.js';

export const MPIJOB_GROUP = 'kubeflow.org';
export const MPIJOB_VERSION = 'v2beta1';
export const MPIJOB_PLURAL = 'mpijobs';
/** labels the mpi-operator puts on the pods it makes */
export const OP_JOB_NAME = 'training.kubeflow.org/job-name';
export const OP_JOB_ROLE = 'training.kubeflow.org/job-role';
export const OP_REPLICA_INDEX = 'training.kubeflow.org/replica-index';
/** worker.sh listens here when set (MPIJob route) instead of its node index's address */
export const LISTEN_ENV = 'SFLOW_MPI_LISTEN_IP';
const HOSTNAME = 'kubernetes.io/hostname';

export interface MpiJobInput {
  /** the pods route's pods, launcher first (prepareTaskPods) */
  pods: k8s.V1Pod[];
  settings: MpiSettings;
  slots: number;
  /** `mpi.launcher_creation_policy` as written (absent: the operator's default) */
  launcherCreationPolicy: string | undefined;
}

/** a pod template of an MPIJob replica: the pod's metadata less name/namespace, its spec */
interface PodTemplate {
  metadata: Pick<k8s.V1ObjectMeta, 'labels' | 'annotations'>;
  spec: k8s.V1PodSpec;
}

interface ReplicaSpec {
  replicas: number;
  restartPolicy: 'Never';
  template: PodTemplate;
}

/** Kubeflow's `kubeflow.org/v2beta1` MPIJob, the fields sflow writes */
export interface MpiJob {
  apiVersion: `${typeof MPIJOB_GROUP}/${typeof MPIJOB_VERSION}`;
  kind: 'MPIJob';
  metadata: k8s.V1ObjectMeta;
  spec: {
    slotsPerWorker: number;
    runLauncherAsWorker: boolean;
    mpiImplementation: 'OpenMPI' | 'Intel' | 'MPICH';
    launcherCreationPolicy?: string;
    runPolicy: { cleanPodPolicy: 'Running'; backoffLimit: number };
    mpiReplicaSpecs: { Launcher: ReplicaSpec; Worker?: ReplicaSpec };
  };
}

/** the pod's template: its metadata less name/namespace, its spec */
function template(pod: k8s.V1Pod): PodTemplate {
  const { labels, annotations } = pod.metadata ?? {};
  return {
    metadata: {
      ...(labels ? { labels: { ...labels } } : {}),
      ...(annotations ? { annotations: { ...annotations } } : {}),
    },
    spec: structuredClone(pod.spec!),
  };
}

function workerTemplate(pods: k8s.V1Pod[], jobName: string, m: MpiSettings): PodTemplate {
  const t = template(pods[1]);
  const labels = t.metadata.labels;
  if (labels) delete labels['sflow/node-index'];
  const nodes = pods.slice(1).map((p) => p.spec?.nodeSelector?.[HOSTNAME]);
  const pinned = nodes.filter((n): n is string => Boolean(n));
  const spec = t.spec;
  if (spec.nodeSelector) {
    delete spec.nodeSelector[HOSTNAME];
    if (Object.keys(spec.nodeSelector).length === 0) delete spec.nodeSelector;
  }
  spec.affinity = {
    ...(pinned.length === nodes.length
      ? {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME, operator: 'In', values: pinned }] }],
            },
          },
        }
      : {}),
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        {
          labelSelector: { matchLabels: { [OP_JOB_NAME]: jobName, [OP_JOB_ROLE]: 'worker' } },
          topologyKey: HOSTNAME,
        },
      ],
    },
  };
  const c = spec.containers[0];
  c.env = [
    ...(c.env ?? []).filter((e) => e.name !== 'SFLOW_TASK_NODE_INDEX'),
    { name: LISTEN_ENV, valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
  ];
  c.readinessProbe = {
    tcpSocket: { port: m.sshPort },
    periodSeconds: 5,
    failureThreshold: Math.max(1, Math.ceil(m.workerSetupTimeoutS / 5)),
  };
  return t;
}

/** The attempt's MPIJob, named like the attempt, labelled like its pods. */
export function buildMpiJob(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
  x: MpiJobInput,
): MpiJob {
  const { pods, settings: m } = x;
  const workers = pods.length - 1;
  const mpiImplementation =
    m.implementation === 'Intel' || m.implementation === 'MPICH' ? m.implementation : 'OpenMPI';
  return {
    apiVersion: `${MPIJOB_GROUP}/${MPIJOB_VERSION}`,
    kind: 'MPIJob',
    metadata: { name, namespace, labels: { ...labels }, annotations: { ...annotations } },
    spec: {
      slotsPerWorker: x.slots,
      runLauncherAsWorker: m.runLauncherAsWorker,
      mpiImplementation,
      ...(x.launcherCreationPolicy !== undefined ? { launcherCreationPolicy: x.launcherCreationPolicy } : {}),
      // workers still running when the launcher ends are deleted; sflow deletes the MPIJob itself
      runPolicy: { cleanPodPolicy: 'Running', backoffLimit: 0 },
      mpiReplicaSpecs: {
        Launcher: { replicas: 1, restartPolicy: 'Never', template: template(pods[0]) },
        ...(workers > 0
          ? { Worker: { replicas: workers, restartPolicy: 'Never', template: workerTemplate(pods, name, m) } }
          : {}),
      },
    },
  };
}
