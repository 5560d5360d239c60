/**
 * Backend declarations → planned backends with a topology. Backend fields are resolved with
 * global variables only (spec config.md §3.4). Before allocation every backend plans on the
 * placeholder nodes its registry entry gives (backends.md §1.4); after allocation on the topology
 * the session hands in. The catalog (backend type → capabilities, placeholder) comes from the
 * caller: the plan imports no backend.
 */
import type { Scope, Value } from '../config/expr/index.js';
import type { Backend as BackendEntry, LocalBackend } from '../config/schema/backends.js';
import type { BackendCatalog, PlaceholderTools, PlannedBackend, PlannedNode } from './types.js';
import { planError, resolveDeep, resolveInt, type Where } from '../config/resolve.js';
import { ownField } from '../util/own-field.js';

export interface BackendDecl {
  item: BackendEntry;
  where: Where;
}

export const DEFAULT_LOCAL_BACKEND: LocalBackend = { name: 'local', type: 'local', default: true };

export function planBackends(
  decls: BackendDecl[],
  scope: Scope,
  catalog: BackendCatalog,
  topology?: Record<string, PlannedNode[]>,
  workflow = '',
): PlannedBackend[] {
  const list = decls.length
    ? decls
    : [{ item: DEFAULT_LOCAL_BACKEND, where: { doc: {}, path: ['backends'] } }];
  const explicitDefault = list.findIndex((d) => d.item.default === true);
  return list.map((d, i) => {
    const item = d.item;
    const type = item.type;
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
    const config = resolveDeep(item, scope, d.where);
    const tools: PlaceholderTools = {
      fail(path, code, message, hint) {
        throw planError(at(path), code, message, hint);
      },
      int: (value, path, label) => resolveInt(value, scope, at(path), label),
    };
    const intField = (key: 'nodes' | 'gpus_per_node'): number | null =>
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
    // `type` and `config` belong together (the entry's own type): the union member this object is
    return {
      name: String(item.name),
      type,
      isDefault: explicitDefault >= 0 ? i === explicitDefault : i === 0,
      placeholder: given ? false : planned.placeholder,
      nodes: given ?? planned.nodes,
      config,
      capabilities: traits.capabilities,
      ...(allocateCommand ? { allocateCommand } : {}),
    } as PlannedBackend;
  });
}

/**
 * A backend's resolved field by its recipe name, for code that lists fields by name whatever the
 * backend's type (the dry-run's details, the not-yet table): undefined where the type has none.
 */
export function backendField(b: PlannedBackend, key: string): unknown {
  return ownField(b.config, key);
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
