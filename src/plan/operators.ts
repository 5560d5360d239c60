/**
 * Operator selection for a task (spec config.md §5.5, backends.md §6.1): named operator, inline
 * override (`extra_args` appended, other fields replaced), or the backend's default.
 */
import { didYouMean } from '../config/errors.js';
import type { Scope } from '../config/expr/index.js';
import { overrideOperator } from '../config/schema/index.js';
import type { PlannedBackend, PlannedOperator } from './types.js';
import type { Operator } from '../config/schema/index.js';
import { planError, resolveDeep, type Resolved, type Where } from '../config/resolve.js';
import { isPlainObject } from '../config/collections.js';

export function selectOperator(
  taskName: string,
  spec: unknown,
  backend: PlannedBackend,
  operators: readonly Operator[],
  scope: Scope,
  where: Where,
): PlannedOperator {
  const at: Where = { doc: where.doc, path: [...where.path, 'operator'] };
  if (spec === undefined || spec === null) {
    const type = backend.capabilities.defaultOperator;
    if (!type) {
      throw planError(
        where,
        'plan.operator_required',
        `task '${taskName}' runs on ${backend.capabilities.label} backend '${backend.name}', which has no default operator`,
        'name a k8s or k8s_mpi operator with `operator: <name>`',
      );
    }
    return { name: `default_${backend.name}`, type, config: {} };
  }
  const override = isPlainObject(spec) ? spec : undefined;
  const name = typeof spec === 'string' ? spec : String(override?.name);
  const named = operators.find((o) => o.name === name);
  if (!named) {
    const names = operators.map((o) => String(o.name));
    throw planError(
      at,
      'plan.unknown_operator',
      `task '${taskName}' references unknown operator '${name}'`,
      didYouMean(name, names) ??
        (names.length ? `declared operators: ${names.join(', ')}` : 'declare it under `operators:`'),
    );
  }
  const merged = override ? withOverride(taskName, named, override, where) : named;
  const mergedWhere: Where = override
    ? at
    : { doc: where.doc, path: ['operators', operators.indexOf(named)] };
  return planned(name, resolveDeep(merged, scope, mergedWhere));
}

/** the named operator with a task's inline override merged in, or the override's first issue, located */
function withOverride(
  taskName: string,
  named: Operator,
  override: Parameters<typeof overrideOperator>[1],
  where: Where,
): Operator {
  const r = overrideOperator(named, override);
  if (r.ok) return r.operator;
  const i = r.issues[0];
  throw planError(
    { doc: where.doc, path: [...where.path, 'operator', ...i.path] },
    'plan.operator_override',
    `task '${taskName}' operator override: ${i.message}`,
    i.hint,
  );
}

/** the planned operator of an entry: its fields less `name` and `type` are the type's settings */
function planned(name: string, entry: Resolved<Operator>): PlannedOperator {
  const { name: _n, type, ...config } = entry;
  // destructuring loses the pairing of `type` and the rest; both come from one entry
  return { name, type, config } as PlannedOperator;
}
