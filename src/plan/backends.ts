/**
 * Backend declarations → planned backends with a topology. Backend fields are resolved with
 * global variables only (spec config.md §3.4). Before allocation every backend gets placeholder
 * nodes (backends.md §1.4): local → `localhost`, `localhost-1`…; others → `<name>-node<i>` with
 * IPs `0.0.0.<i+1>`; a Docker pool → its host list.
 */
import type { Scope } from '../config/expr/index.js';
import type { BackendType, PlannedBackend, PlannedNode } from './types.js';
import { planError, resolveDeep, resolveInt, type Where } from '../config/resolve.js';

type Obj = Record<string, any>;

export interface BackendDecl {
  item: Obj;
  where: Where;
}

export const DEFAULT_LOCAL_BACKEND = { name: 'local', type: 'local', default: true };

export function localNodes(count: number, gpusPerNode: number | null): PlannedNode[] {
  return Array.from({ length: Math.max(1, count) }, (_, i) => ({
    name: i === 0 ? 'localhost' : `localhost-${i}`,
    ip: '127.0.0.1',
    index: i,
    numGpus: gpusPerNode,
  }));
}

function hostNodes(hosts: Obj[]): PlannedNode[] {
  return hosts.map((h, i) => {
    const gpn = h.gpus_per_node;
    return {
      name: String(h.name ?? h.address ?? `host${i}`),
      ip: String(h.rendezvous_address ?? h.ip_address ?? h.address ?? ''),
      index: i,
      numGpus: typeof gpn === 'number' ? gpn : gpn === undefined || gpn === null ? null : Number(gpn),
    };
  });
}

export function planBackends(
  decls: BackendDecl[],
  scope: Scope,
  topology?: Record<string, PlannedNode[]>,
): PlannedBackend[] {
  const list = decls.length
    ? decls
    : [{ item: DEFAULT_LOCAL_BACKEND as Obj, where: { doc: {}, path: ['backends'] } }];
  const explicitDefault = list.findIndex((d) => d.item.default === true);
  return list.map((d, i) => {
    const item = d.item;
    const type = item.type as BackendType;
    const config = resolveDeep(item, scope, d.where) as Obj;
    const intField = (key: string): number | null =>
      config[key] === undefined || config[key] === null
        ? null
        : resolveInt(
            config[key],
            scope,
            { doc: d.where.doc, path: [...d.where.path, key] },
            `backends.${item.name}.${key}`,
          );
    const gpn = intField('gpus_per_node');
    if (gpn !== null && gpn < 0) {
      throw planError(
        { doc: d.where.doc, path: [...d.where.path, 'gpus_per_node'] },
        'plan.gpus_per_node',
        `gpus_per_node must be > 0 (backend '${item.name}')`,
      );
    }
    if (gpn === 0 && type === 'local') {
      throw planError(
        { doc: d.where.doc, path: [...d.where.path, 'gpus_per_node'] },
        'plan.gpus_per_node',
        `gpus_per_node must be > 0 (backend '${item.name}')`,
        'omit gpus_per_node for a CPU-only local backend (0 is accepted on docker, slurm and kubernetes backends)',
      );
    }
    let nodesCount = intField('nodes');
    if (nodesCount !== null) config.nodes = nodesCount;
    if (gpn !== null) config.gpus_per_node = gpn;
    let nodes: PlannedNode[];
    let placeholder = true;
    if (topology?.[item.name]) {
      nodes = topology[item.name];
      placeholder = false;
    } else if (type === 'local') {
      nodes = localNodes(nodesCount ?? 1, gpn);
      placeholder = false;
    } else if (type === 'docker' && Array.isArray(config.hosts) && config.hosts.length > 0) {
      const hosts = config.hosts as Obj[];
      if (nodesCount !== null && nodesCount !== hosts.length) {
        throw planError(
          { doc: d.where.doc, path: [...d.where.path, 'nodes'] },
          'plan.docker_nodes_hosts',
          `backend '${item.name}': nodes: ${nodesCount} disagrees with the ${hosts.length} host(s) listed under hosts`,
          'drop `nodes:` (the host list is the node list) or make it match',
        );
      }
      hosts.forEach((h, hi) => {
        if (h.gpus_per_node !== undefined && h.gpus_per_node !== null) {
          h.gpus_per_node = resolveInt(
            h.gpus_per_node,
            scope,
            { doc: d.where.doc, path: [...d.where.path, 'hosts', hi, 'gpus_per_node'] },
            `hosts[${hi}].gpus_per_node`,
          );
        }
      });
      nodes = hostNodes(hosts);
      const noAddr = nodes.filter((n) => !n.ip).map((n) => n.name);
      if (noAddr.length) {
        throw planError(
          { doc: d.where.doc, path: [...d.where.path, 'hosts'] },
          'plan.docker_host_address',
          `backend '${item.name}': host(s) without a usable peer address: ${noAddr.join(', ')}`,
          'give each host an `address` (or `rendezvous_address`)',
        );
      }
    } else {
      nodesCount = Math.max(1, nodesCount ?? 1);
      nodes = Array.from({ length: nodesCount }, (_, n) => ({
        name: `${item.name}-node${n}`,
        ip: `0.0.0.${n + 1}`,
        index: n,
        numGpus: gpn,
      }));
    }
    return {
      name: String(item.name),
      type,
      isDefault: explicitDefault >= 0 ? i === explicitDefault : i === 0,
      placeholder,
      nodes,
      config,
    };
  });
}

/** The `backends` expression namespace: name → {name, nodes: [{name, ip_address, index, num_gpus}]} */
export function backendsNamespace(backends: PlannedBackend[]): Obj {
  const ns: Obj = Object.create(null);
  for (const b of backends) {
    ns[b.name] = {
      name: b.name,
      nodes: b.nodes.map((n) => ({ name: n.name, ip_address: n.ip, index: n.index, num_gpus: n.numGpus })),
    };
  }
  return ns;
}
