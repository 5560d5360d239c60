/**
 * Backend declarations → planned backends with a topology. Backend fields are resolved with
 * global variables only (spec config.md §3.4). Before allocation every backend plans on the
 * placeholder nodes its registry entry gives (backends.md §1.4); after allocation on the topology
 * the session hands in. The catalog (backend type → capabilities, placeholder) comes from the
 * caller: the plan imports no backend.
 */
import type { Scope, Value } from '../config/expr/index.js';
import type { BackendCatalog, BackendType, PlaceholderTools, PlannedBackend, PlannedNode } from './types.js';
import { planError, resolveDeep, resolveInt, type Where } from '../config/resolve.js';

type Obj = Record<string, unknown>;

export interface BackendDecl {
  item: Obj;
  where: Where;
}

export const DEFAULT_LOCAL_BACKEND = { name: 'local', type: 'local', default: true };

export function planBackends(
  decls: BackendDecl[],
  scope: Scope,
  catalog: BackendCatalog,
  topology?: Record<string, PlannedNode[]>,
  workflow = '',
): PlannedBackend[] {
  const list = decls.length
    ? decls
    : [{ item: DEFAULT_LOCAL_BACKEND as Obj, where: { doc: {}, path: ['backends'] } }];
  const explicitDefault = list.findIndex((d) => d.item.default === true);
  return list.map((d, i) => {
    const item = d.item;
    const type = item.type as BackendType;
    const at = (path: Array<string | number>): Where => ({
      doc: d.where.doc,
      path: [...d.where.path, ...path],
    });
    const traits = catalog(type);
    if (!traits) {
      throw planError(
        at(['type']),
        'plan.unknown_backend_type',
        `backend '${String(item.name)}' has unknown type '${type}'`,
      );
    }
    const config = resolveDeep(item, scope, d.where) as Obj;
    const tools: PlaceholderTools = {
      fail(path, code, message, hint) {
        throw planError(at(path), code, message, hint);
      },
      int: (value, path, label) => resolveInt(value, scope, at(path), label),
    };
    const intField = (key: string): number | null =>
      config[key] === undefined || config[key] === null
        ? null
        : tools.int(config[key], [key], `backends.${item.name}.${key}`);
    const gpn = intField('gpus_per_node');
    if (gpn !== null && gpn < 0) {
      tools.fail(
        ['gpus_per_node'],
        'plan.gpus_per_node',
        `gpus_per_node must be > 0 (backend '${item.name}')`,
      );
    }
    const nodesCount = intField('nodes');
    if (nodesCount !== null) config.nodes = nodesCount;
    if (gpn !== null) config.gpus_per_node = gpn;
    const given = topology?.[String(item.name)];
    const input = { name: String(item.name), config, nodes: nodesCount, gpusPerNode: gpn };
    const planned = traits.placeholder(input, tools);
    const allocateCommand = traits.allocationCommand?.({ ...input, workflow });
    return {
      name: String(item.name),
      type,
      isDefault: explicitDefault >= 0 ? i === explicitDefault : i === 0,
      placeholder: given ? false : planned.placeholder,
      nodes: given ?? planned.nodes,
      config,
      capabilities: traits.capabilities,
      ...(allocateCommand ? { allocateCommand } : {}),
    };
  });
}

/** The `backends` expression namespace: name → {name, nodes: [{name, ip_address, index, num_gpus}]} */
export function backendsNamespace(backends: PlannedBackend[]): Record<string, Value> {
  const ns: Record<string, Value> = Object.create(null) as Record<string, Value>;
  for (const b of backends) {
    ns[b.name] = {
      name: b.name,
      nodes: b.nodes.map((n) => ({ name: n.name, ip_address: n.ip, index: n.index, num_gpus: n.numGpus })),
    };
  }
  return ns;
}
