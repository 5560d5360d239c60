/**
 * Replica expansion (spec config.md §5.7): `count` → `<base>_0…`; `variables` → one replica per
 * element of the Cartesian product of the domains (first variable outermost), named from the
 * rendered values with `.`, `-` and spaces turned into `_` — and, so that replica names obey the
 * rules of declared task names, `/`, `\`, any other whitespace and control characters too. A
 * secret variable's value never becomes a name: its part is `secret<k>`, k the value's place in
 * the domain (the same k stands for it in the plan's sweep values and every record).
 */
import { renderValue, toNative, type Scope, type Value } from '../config/expr/index.js';
import type { ResolvedVariable } from '../config/variables.js';
import { evaluateField, planError, resolveInt, type Where } from '../config/resolve.js';
import { InstanceBudget } from './limits.js';

export interface ReplicaInstance {
  name: string;
  replicaIndex: number;
  /** swept variable → this replica's value (raw domain value, not cast) */
  sweep: Record<string, Value>;
  /** swept secret variable → what stands for its value in names and records: `secret<k>` */
  masked?: Record<string, string>;
}

export interface Expansion {
  policy: 'parallel' | 'sequential';
  replicated: boolean;
  instances: ReplicaInstance[];
}

export function sanitiseReplicaPart(v: Value): string {
  return renderValue(v).replace(/[.\-\s/\\\p{Cc}]/gu, '_');
}

/** `replicas.policy` (default parallel), an expression resolved */
function replicaPolicy(given: unknown, base: string, scope: Scope, where: Where): 'parallel' | 'sequential' {
  if (given === undefined || given === null) return 'parallel';
  const p = String(toNative(evaluateField(given, scope, where)))
    .trim()
    .toLowerCase();
  if (p !== 'parallel' && p !== 'sequential') {
    throw planError(
      where,
      'plan.replicas_policy',
      `replicas.policy of task '${base}' must be 'parallel' or 'sequential', got '${p}'`,
    );
  }
  return p;
}

/** a swept variable's domain (a located error when it is unknown or has none) */
function sweepDomain(
  name: string,
  base: string,
  vars: Map<string, ResolvedVariable>,
  w: Where,
): { name: string; values: Value[] } {
  const v = vars.get(name);
  if (!v) {
    throw planError(
      w,
      'plan.replicas_unknown_variable',
      `replicas of task '${base}' references unknown variable '${name}'`,
      `declared variables: ${[...vars.keys()].join(', ')}`,
    );
  }
  if (!v.domain || v.domain.length === 0) {
    throw planError(
      w,
      'plan.replicas_no_domain',
      `replicas of task '${base}' requires variable '${name}' to define a non-empty domain`,
      `add \`domain: [...]\` to '${name}' or sweep it with --set '${name}=[a,b]'`,
    );
  }
  return { name, values: v.domain };
}

export function expandReplicas(
  base: string,
  replicas: { count?: unknown; policy?: unknown; variables?: string[] | null } | null | undefined,
  vars: Map<string, ResolvedVariable>,
  scope: Scope,
  where: Where,
  budget: InstanceBudget = new InstanceBudget(),
  secret: ReadonlySet<string> = new Set(),
): Expansion {
  if (!replicas) {
    budget.take(1, base, where);
    return { policy: 'parallel', replicated: false, instances: [{ name: base, replicaIndex: 0, sweep: {} }] };
  }
  const at = (k: string): Where => ({ doc: where.doc, path: [...where.path, k] });
  const policy = replicaPolicy(replicas.policy, base, scope, at('policy'));
  let count: number | undefined;
  if (replicas.count !== undefined && replicas.count !== null) {
    count = resolveInt(replicas.count, scope, at('count'), `replicas.count of task '${base}'`);
    if (count <= 0)
      throw planError(
        at('count'),
        'plan.replicas_count',
        `replicas.count must be > 0 (task '${base}', got ${count})`,
      );
  }
  const sweepVars = replicas.variables ?? [];
  if (sweepVars.length === 0) {
    const n = count ?? 1;
    budget.take(n, base, at(replicas.count !== undefined && replicas.count !== null ? 'count' : 'variables'));
    return {
      policy,
      replicated: true,
      instances: Array.from({ length: n }, (_, i) => ({ name: `${base}_${i}`, replicaIndex: i, sweep: {} })),
    };
  }
  const domains = sweepVars.map((name, i) =>
    sweepDomain(name, base, vars, { doc: where.doc, path: [...where.path, 'variables', i] }),
  );
  // the product of the domains, checked before any combination is built
  budget.take(
    domains.reduce((n, d) => n * d.values.length, 1),
    base,
    at('variables'),
  );
  // each combination as the domain indices of its values
  const combos: number[][] = [[]];
  for (const d of domains) {
    const next: number[][] = [];
    for (const c of combos) for (let k = 0; k < d.values.length; k++) next.push([...c, k]);
    combos.splice(0, combos.length, ...next);
  }
  const part = (j: number, k: number): string =>
    secret.has(domains[j].name) ? `secret${k}` : sanitiseReplicaPart(domains[j].values[k]);
  if (count !== undefined && count !== combos.length) {
    throw planError(
      at('count'),
      'plan.replicas_sweep_size',
      `replicas.count=${count} does not match sweep size ${combos.length} (task '${base}')`,
      `drop replicas.count or set it to ${combos.length}`,
    );
  }
  const seen = new Map<string, number>();
  const instances = combos.map((combo, i) => {
    const name = [base, ...combo.map((k, j) => part(j, k))].join('_');
    const prev = seen.get(name);
    if (prev !== undefined) {
      throw planError(
        where,
        'plan.replicas_name_clash',
        `sweep replicas ${prev} and ${i} of task '${base}' both get the name '${name}'`,
        'use domain values that differ after replacing ".", "-", "/", "\\", whitespace and control characters with "_"',
      );
    }
    seen.set(name, i);
    const sweep: Record<string, Value> = {};
    let masked: Record<string, string> | undefined;
    domains.forEach((d, j) => {
      sweep[d.name] = d.values[combo[j]];
      if (secret.has(d.name)) (masked ??= {})[d.name] = part(j, combo[j]);
    });
    return masked ? { name, replicaIndex: i, sweep, masked } : { name, replicaIndex: i, sweep };
  });
  return { policy, replicated: true, instances };
}
