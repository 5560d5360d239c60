/**
 * Docker (backends.md §3): one local engine or an SSH pool of hosts (docker-backend.ts). A pool's
 * placeholder topology is its host list (each host's peer address; `nodes:` must agree).
 */
import { DockerBackendSchema } from '../../config/schema/backend-docker.js';
import type { PlaceholderInput, PlaceholderTools, PlannedNode } from '../../plan/types.js';
import { lazyPart, placeholderNodes, type BackendKind } from '../kind.js';
import { dockerCollectorLauncher } from './monitor-collector.js';

const impl = lazyPart('docker', () => import('./kind-impl.js'));

type Host = Record<string, unknown>;

/** a host's GPUs: its own `gpus_per_node`, else the backend's (`fallback`) */
function hostNodes(hosts: Host[], fallback: unknown): PlannedNode[] {
  return hosts.map((h, i) => {
    const gpn = h.gpus_per_node ?? fallback;
    const pick = (...keys: string[]): unknown =>
      keys.map((k) => h[k]).find((v) => v !== undefined && v !== null);
    return {
      name: String(pick('name', 'address') ?? `host${i}`),
      ip: String(pick('rendezvous_address', 'ip_address', 'address') ?? ''),
      index: i,
      numGpus: typeof gpn === 'number' ? gpn : gpn === undefined || gpn === null ? null : Number(gpn),
    };
  });
}

function poolNodes({ name, config, nodes }: PlaceholderInput, tools: PlaceholderTools): PlannedNode[] {
  const hosts = config.hosts as Host[];
  if (nodes !== null && nodes !== hosts.length) {
    tools.fail(
      ['nodes'],
      'plan.docker_nodes_hosts',
      `backend '${name}': nodes: ${nodes} disagrees with the ${hosts.length} host(s) listed under hosts`,
      'drop `nodes:` (the host list is the node list) or make it match',
    );
  }
  hosts.forEach((h, hi) => {
    if (h.gpus_per_node !== undefined && h.gpus_per_node !== null)
      h.gpus_per_node = tools.int(
        h.gpus_per_node,
        ['hosts', hi, 'gpus_per_node'],
        `hosts[${hi}].gpus_per_node`,
      );
  });
  const out = hostNodes(hosts, config.gpus_per_node);
  const noAddr = out.filter((n) => !n.ip).map((n) => n.name);
  if (noAddr.length) {
    tools.fail(
      ['hosts'],
      'plan.docker_host_address',
      `backend '${name}': host(s) without a usable peer address: ${noAddr.join(', ')}`,
      'give each host an `address` (or `rendezvous_address`)',
    );
  }
  return out;
}

export const dockerKind: BackendKind = {
  type: 'docker',
  settings: DockerBackendSchema,
  capabilities: {
    label: 'Docker',
    defaultOperator: 'docker_run',
    gpuIndices: true,
    gpuReleaseOnReady: true,
    gpuReservationRegistry: true,
    monitor: true,
    batch: false,
    probesFrom: 'driver',
    failFastDefault: false,
    pollIntervalMs: 1_000,
    syntheticNodes: false,
    removesContainers: true,
    notYet: ['docker-node-filters', 'docker-host-context', 'docker-log-offload'],
  },
  placeholder: (input, tools) => {
    const hosts = input.config.hosts;
    if (Array.isArray(hosts) && hosts.length > 0)
      return { nodes: poolNodes(input, tools), placeholder: true };
    return { nodes: placeholderNodes(input.name, input.nodes, input.gpusPerNode), placeholder: true };
  },
  load: impl.load,
  create: (planned, ctx) => new (impl.get().DockerBackend)(planned, ctx),
  liveDriver: (runDir) => impl.get().dockerLiveDriver(runDir),
  recoverRun: (runDir, o) => impl.get().dockerRecoverRun(runDir, o),
  monitorCollector: dockerCollectorLauncher,
};
