/**
 * The `k8s_mpi` operator's pods route (backends.md §5.2): one pod per node of the task, the
 * launcher first (node index 0, its exit code is the task's), then the workers. All of them get a
 * per-attempt SSH key from the task's env Secret (SFLOW_MPI_SSH_KEY_B64, never in a manifest,
 * argv or log) and a private emptyDir at /sflow/mpi for the key, the hostfile and sshd's files.
 *
 *  - a worker runs worker.sh: sshd (installed first when the image lacks it and `ensure_sshd`)
 *    on its node address and `ssh_port`, accepting only the attempt's key, until the launcher
 *    says it is done (a file it touches over ssh) — then it exits 0;
 *  - the launcher runs the recipe's script behind a preamble (mpi-launcher.ts) that writes the
 *    hostfile and puts an `mpirun` shim first on PATH, in the style of the `mpi_implementation`.
 *
 * The MPIJob route (mpijob.ts) runs these same scripts in the operator's pods.
 */
import { generateKeyPairSync } from 'node:crypto';

import type { K8sMpiBlock, K8sOperatorConfig } from './operator-config.js';

export const MPI_DIR = '/sflow/mpi';
export const MPI_KEY_ENV = 'SFLOW_MPI_SSH_KEY_B64';
/** env prefixes always forwarded to remote ranks (the recipe's `forward_env_prefixes` add to them) */
export const FORWARD_PREFIXES = ['NCCL_', 'UCX_', 'GLOO_', 'NVSHMEM_', 'OMPI_MCA_', 'SFLOW_'];
export const FORWARD_VARS = ['PATH', 'LD_LIBRARY_PATH', 'OMP_NUM_THREADS'];

export interface MpiSettings {
  route: 'auto' | 'operator' | 'pods';
  slotsPerWorker: number | undefined;
  runLauncherAsWorker: boolean;
  sshPort: number;
  implementation: string;
  ensureSshd: boolean;
  forwardPrefixes: string[];
  /** null: keep the image's default */
  ompNumThreads: number | null;
  cpuBind: 'core' | 'numa' | 'none';
  cpuBindCap: number;
  workerSetupTimeoutS: number;
  /** MPIJob route: as written (absent: the operator's default, WaitForWorkersReady) */
  launcherCreationPolicy: string | undefined;
  /** MPIJob route: how long to wait for the operator's launcher pod */
  launcherDiscoveryTimeoutS: number;
}

const num = (v: unknown, d: number): number =>
  v === undefined || v === null || v === '' || !Number.isFinite(Number(v)) ? d : Number(v);
const flag = (v: unknown, d: boolean): boolean =>
  v === undefined || v === null ? d : v === true || v === 'true';

/** the MPI settings of an operator's `mpi:` block (a `k8s` operator has none: the defaults) */
export function mpiSettings(op: K8sOperatorConfig | { mpi?: K8sMpiBlock }): MpiSettings {
  const m: K8sMpiBlock = ('mpi' in op ? op.mpi : undefined) ?? {};
  const omp =
    m.omp_num_threads === undefined ? 8 : m.omp_num_threads === null ? 0 : num(m.omp_num_threads, 8);
  return {
    route: (m.route as MpiSettings['route']) ?? 'auto',
    slotsPerWorker: m.slots_per_worker === undefined ? undefined : num(m.slots_per_worker, 1),
    runLauncherAsWorker: flag(m.run_launcher_as_worker, true),
    sshPort: num(m.ssh_port, 2222),
    implementation: String(m.mpi_implementation ?? 'OpenMPI'),
    ensureSshd: flag(m.ensure_sshd, true),
    forwardPrefixes: (m.forward_env_prefixes ?? []).map(String),
    ompNumThreads: omp > 0 ? omp : null,
    cpuBind: (m.cpu_bind as MpiSettings['cpuBind']) ?? 'core',
    cpuBindCap: num(m.cpu_bind_cores_per_rank, 8),
    workerSetupTimeoutS: num(m.worker_setup_timeout_seconds, 900),
    launcherCreationPolicy:
      m.launcher_creation_policy === undefined ? undefined : String(m.launcher_creation_policy),
    launcherDiscoveryTimeoutS: num(m.launcher_discovery_timeout, 600),
  };
}

/** a fresh private key for one attempt (PEM, base64: one line for the env Secret) */
export function newMpiKey(): string {
  const { privateKey } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'sec1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return Buffer.from(privateKey).toString('base64');
}

export const SSH_OPTS = (port: number): string =>
  `-p ${port} -i ${MPI_DIR}/ssh/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=10`;

/** lines every pod runs first: the key and its public half, the node's addresses */
export function common(): string[] {
  return [
    `__sflow_mpi=${MPI_DIR}`,
    'mkdir -p "$__sflow_mpi/ssh" "$__sflow_mpi/bin" && chmod 700 "$__sflow_mpi/ssh"',
    `printf %s "\${${MPI_KEY_ENV}:-}" | base64 -d > "$__sflow_mpi/ssh/id" 2>/dev/null`,
    'chmod 600 "$__sflow_mpi/ssh/id"',
    'if ! ssh-keygen -y -f "$__sflow_mpi/ssh/id" > "$__sflow_mpi/ssh/id.pub" 2>/dev/null; then',
    '  echo "[sflow-mpi] cannot read the attempt\'s SSH key (the image needs ssh-keygen from openssh-client)" >&2; exit 1',
    'fi',
    `unset ${MPI_KEY_ENV}`,
    "__sflow_mpi_ips=$(printf %s \"${SFLOW_TASK_ASSIGNED_NODE_IPS:-}\" | tr ',' ' ')",
    '__sflow_mpi_index=${SFLOW_TASK_NODE_INDEX:-0}',
  ];
}

/** worker.sh: sshd until the launcher is done */
export function workerScript(m: MpiSettings): string {
  const p = m.sshPort;
  return [
    '#!/bin/bash',
    "# sflow k8s_mpi worker (pods route): sshd for the launcher's mpirun until it is done",
    ...common(),
    'set -- $__sflow_mpi_ips; shift "$__sflow_mpi_index"; __sflow_mpi_ip=$1',
    "# MPIJob route: the pod's own address (downward API), the replica index is not the node index",
    '[ -n "${SFLOW_MPI_LISTEN_IP:-}" ] && __sflow_mpi_ip=$SFLOW_MPI_LISTEN_IP',
    '__sflow_sshd=$(command -v sshd || { [ -x /usr/sbin/sshd ] && echo /usr/sbin/sshd; })',
    ...(m.ensureSshd
      ? [
          'if [ -z "$__sflow_sshd" ]; then',
          '  echo "[sflow-mpi] installing openssh-server (ensure_sshd)"',
          '  (export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends openssh-server) >/dev/null 2>&1 || yum install -y -q openssh-server >/dev/null 2>&1',
          '  __sflow_sshd=$(command -v sshd || { [ -x /usr/sbin/sshd ] && echo /usr/sbin/sshd; })',
          'fi',
        ]
      : []),
    '[ -n "$__sflow_sshd" ] || { echo "[sflow-mpi] the image has no sshd (set mpi.ensure_sshd: true or use an image with openssh-server)" >&2; exit 1; }',
    'cp "$__sflow_mpi/ssh/id.pub" "$__sflow_mpi/ssh/authorized_keys"',
    'ssh-keygen -q -t ed25519 -N "" -f "$__sflow_mpi/ssh/host_key" >/dev/null',
    'mkdir -p /run/sshd 2>/dev/null; chmod 755 /run/sshd 2>/dev/null',
    `cat > "$__sflow_mpi/sshd_config" <<EOF`,
    `Port ${p}`,
    'ListenAddress $__sflow_mpi_ip',
    'HostKey $__sflow_mpi/ssh/host_key',
    'PidFile $__sflow_mpi/sshd.pid',
    'AuthorizedKeysFile $__sflow_mpi/ssh/authorized_keys',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'StrictModes no',
    'UsePAM no',
    'EOF',
    `echo "[sflow-mpi] worker $__sflow_mpi_index: sshd on $__sflow_mpi_ip:${p}"`,
    '"$__sflow_sshd" -D -e -f "$__sflow_mpi/sshd_config" &',
    '__sflow_sshd_pid=$!',
    'trap \'kill "$__sflow_sshd_pid" 2>/dev/null; exit 143\' TERM INT',
    'while [ ! -e "$__sflow_mpi/done" ] && kill -0 "$__sflow_sshd_pid" 2>/dev/null; do sleep 1; done',
    'if [ -e "$__sflow_mpi/done" ]; then',
    '  kill "$__sflow_sshd_pid" 2>/dev/null',
    `  echo "[sflow-mpi] worker $__sflow_mpi_index: the launcher is done"`,
    '  exit 0',
    'fi',
    'wait "$__sflow_sshd_pid"; __sflow_rc=$?',
    `echo "[sflow-mpi] worker $__sflow_mpi_index: sshd ended (exit $__sflow_rc)" >&2`,
    'exit 1',
    '',
  ].join('\n');
}
