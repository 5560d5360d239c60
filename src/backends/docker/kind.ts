/**
 * Docker (backends.md §3): one local engine or an SSH pool of hosts (docker-backend.ts). A pool's
 * placeholder topology is its host list (each host's peer address; `nodes:` must agree), less the
 * hosts `include_nodes` / `exclude_nodes` drop; the local engine's is its nodes as the run names
 * them (`localhost`, …).
 */
import { DockerBackendSchema } from '../../config/schema/backend-docker.js';
import type { BackendConfig, PlaceholderInput, PlaceholderTools, PlannedNode } from '../../plan/types.js';
import { lazyPart, stringList, type BackendKind } from '../kind.js';
import { localEngineNodes } from './local-nodes.js';
import { applyDockerExtraArgs } from './extra-args.js';
import { DOCKER_CLI_FLAGS } from './cli-flags.js';
import { dockerCollectorLauncher } from './monitor-collector.js';
import { dockerHandleState } from './handle-state.js';

const impl = lazyPart('docker', () => import('./kind-impl.js'));

type Config = BackendConfig<'docker'>;
type Host = NonNullable<Config['hosts']>[number];

/** a host's GPUs: its own `gpus_per_node`, else the backend's (`fallback`) */
function hostNodes(hosts: Host[], fallback: unknown): PlannedNode[] {
  return hosts.map((h, i) => {
    const gpn = h.gpus_per_node ?? fallback;
    const pick = (...values: unknown[]): unknown => values.find((v) => v !== undefined && v !== null);
    return {
      name: String(pick(h.name, h.address) ?? `host${i}`),
      ip: String(pick(h.rendezvous_address, h.ip_address, h.address) ?? ''),
      index: i,
      numGpus: typeof gpn === 'number' ? gpn : gpn === undefined || gpn === null ? null : Number(gpn),
    };
  });
}

/**
 * `include_nodes` / `exclude_nodes` of a pool: the hosts they keep, in the listed order (the
 * backend's `hosts` is replaced by them, so everything after the plan sees only those). A name
 * that is no host of the pool is an error (a typo would otherwise silently keep or drop nothing).
 */
function keptHosts(name: string, config: Config, hosts: Host[], tools: PlaceholderTools): Host[] {
  const known = new Set(hosts.map((h) => String(h.name)));
  const list = (key: 'include_nodes' | 'exclude_nodes'): string[] => {
    const v = (config[key] ?? []).map(String);
    v.forEach((n, i) => {
      if (!known.has(n))
        tools.fail(
          [key, i],
          'plan.docker_node_filter',
          `backend '${name}': ${key} names '${n}', which is not one of its hosts (${[...known].join(', ')})`,
          'use the `name:` of a host under hosts:',
        );
    });
    return v;
  };
  const include = new Set(list('include_nodes'));
  const exclude = new Set(list('exclude_nodes'));
  const kept = hosts.filter(
    (h) => (include.size === 0 || include.has(String(h.name))) && !exclude.has(String(h.name)),
  );
  if (kept.length === 0)
    tools.fail(
      [include.size ? 'include_nodes' : 'exclude_nodes'],
      'plan.docker_node_filter',
      `backend '${name}': include_nodes / exclude_nodes leave none of its hosts`,
    );
  return kept;
}

function poolNodes(
  { name, config, nodes }: PlaceholderInput<'docker'>,
  all: Host[],
  tools: PlaceholderTools,
): PlannedNode[] {
  const hosts = keptHosts(name, config, all, tools);
  if (nodes !== null && nodes !== hosts.length) {
    tools.fail(
      ['nodes'],
      'plan.docker_nodes_hosts',
      `backend '${name}': nodes: ${nodes} disagrees with the ${hosts.length} host(s) ${hosts.length === all.length ? 'listed under hosts' : 'include_nodes / exclude_nodes keep'}`,
      'drop `nodes:` (the host list is the node list) or make it match',
    );
  }
  all.forEach((h, hi) => {
    if (h.gpus_per_node !== undefined && h.gpus_per_node !== null)
      h.gpus_per_node = tools.int(
        h.gpus_per_node,
        ['hosts', hi, 'gpus_per_node'],
        `hosts[${hi}].gpus_per_node`,
      );
  });
  config.hosts = hosts;
  const out = hostNodes(hosts, config.gpus_per_node);
  const noAddr = out.filter((n) => !n.ip).map((n) => n.name);
  if (noAddr.length) {
    tools.fail(
      ['hosts'],
      'plan.docker_host_address',
      `backend '${name}': host(s) without a usable peer address: ${noAddr.join(', ')}`,
      'give each host an `address` (or `rendezvous_address`; a host reached through `context:` needs `rendezvous_address` or `ip_address`)',
    );
  }
  return out;
}

export const dockerKind: BackendKind<'docker'> = {
  cliFlags: DOCKER_CLI_FLAGS,
  applyRunFlags: (recipe, options) => applyDockerExtraArgs(recipe, stringList(options.extraDockerArgs)),
  type: 'docker',
  handleState: dockerHandleState,
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
    notYet: ['local-node-filters'],
  },
  placeholder: (input, tools) => {
    const hosts = input.config.hosts;
    if (hosts && hosts.length > 0) return { nodes: poolNodes(input, hosts, tools), placeholder: true };
    // the local engine's nodes are known before allocating: the run's own names (its GPUs are read then)
    return { nodes: localEngineNodes(input.nodes ?? 1, input.gpusPerNode), placeholder: true };
  },
  load: impl.load,
  create: (planned, ctx) => new (impl.get().DockerBackend)(planned, ctx),
  liveDriver: (runDir) => impl.get().dockerLiveDriver(runDir),
  recoverRun: (runDir, o) => impl.get().dockerRecoverRun(runDir, o),
  monitorCollector: dockerCollectorLauncher,
};
