/**
 * Operator selection for a task (spec config.md §5.5, backends.md §6.1): named operator, inline
 * override (`extra_args` appended, other fields replaced), or the backend's default.
 */
import { didYouMean } from '../config/errors.js';
import type { Scope } from '../config/expr/index.js';
import { validateOperatorOverride } from '../config/schema/index.js';
import type { PlannedBackend, PlannedOperator } from './types.js';
import type { Operator } from '../config/schema/index.js';
import { planError, resolveDeep, type Where } from '../config/resolve.js';

type Obj = Record<string, unknown>;

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v.map((x: unknown) => x) : []);

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
  const name = typeof spec === 'string' ? spec : String((spec as Obj).name);
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
  let merged: Obj = { ...named };
  const namedExtra = merged.extra_args;
  let mergedWhere: Where = { doc: where.doc, path: ['operators', operators.indexOf(named)] };
  if (typeof spec === 'object') {
    const override = spec as Obj;
    for (const [k, v] of Object.entries(override)) {
      if (k === 'name' || v === null || v === undefined) continue;
      if (k === 'extra_args' && Array.isArray(v)) merged.extra_args = [...listOf(namedExtra), ...listOf(v)];
      else merged[k] = v;
    }
    const issues = validateOperatorOverride(String(named.type), merged);
    if (issues.length) {
      const i = issues[0];
      throw planError(
        { doc: where.doc, path: [...where.path, 'operator', ...i.path] },
        'plan.operator_override',
        `task '${taskName}' operator override: ${i.message}`,
        i.hint,
      );
    }
    mergedWhere = at;
  }
  merged = resolveDeep(merged, scope, mergedWhere);
  const { name: _n, type, ...config } = merged;
  return { name, type: String(type), config };
}
