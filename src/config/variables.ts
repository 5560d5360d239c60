/**
 * Variable resolution (spec config.md §2.3) and casting (§2.2). Literal values are cast first, so
 * a bad `--set` is reported against the variable that was overridden; expression values are
 * resolved iteratively (declaration order does not matter) and cast as soon as they resolve.
 */
import {
  DomainValue,
  PyFloat,
  cleanRead,
  hasExpression,
  isDict,
  renderValue,
  withoutPrototype,
  type Scope,
  type Value,
} from './expr/index.js';
import { isYamlFloat } from './source.js';
import { evaluateField, planError, type Where } from './resolve.js';
import { compileCached } from './templates.js';
import { refuseNulInVariable } from './nul-check.js';
import type { RefPath } from './expr/template.js';
import { SflowError } from '../util/sflow-error.js';

export const VARIABLE_TYPES = ['string', 'integer', 'float', 'boolean', 'list', 'dict'] as const;

export interface RawVariable {
  name: string;
  value: unknown;
  type?: string | null;
  domain?: unknown[] | null;
  description?: string | null;
  /** position info: the item object in the merged document and its path */
  where: Where;
  /** the item object in the merged document (for YAML float detection) */
  docItem: unknown;
}

export interface ResolvedVariable {
  name: string;
  value: Value;
  type: string;
  domain: Value[] | null;
  description?: string;
}

function castError(v: RawVariable, expected: string, got: Value): SflowError {
  return planError(
    { doc: v.where.doc, path: [...v.where.path, 'value'] },
    'plan.variable_cast',
    `Variable '${v.name}' expected ${expected}, got '${renderValue(got)}'`,
    `give '${v.name}' a value of type ${v.type}, or change its \`type:\``,
  );
}

export function castVariable(v: RawVariable, value: Value, yamlFloat: boolean): Value {
  const type = v.type ?? 'string';
  if (value === null || value === undefined) return null;
  const raw = value instanceof DomainValue ? value.value : value;
  switch (type) {
    case 'string':
      if (typeof raw === 'string') return raw;
      return renderValue(yamlFloat && typeof raw === 'number' ? new PyFloat(raw) : raw);
    case 'integer':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'number' && Number.isInteger(raw) && !yamlFloat) return raw;
      if (typeof raw === 'string' && /^\s*[-+]?\d+\s*$/.test(raw)) {
        const n = parseInt(raw, 10);
        if (Number.isSafeInteger(n)) return n;
        throw castError(v, 'integer within ±2^53 (9007199254740991)', raw);
      }
      throw castError(v, 'integer', raw);
    case 'float':
      if (raw instanceof PyFloat) return raw;
      if (typeof raw === 'number') return new PyFloat(raw);
      if (typeof raw === 'string' && raw.trim() !== '' && !Number.isNaN(Number(raw.trim())))
        return new PyFloat(Number(raw.trim()));
      throw castError(v, 'float', raw);
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'number') return raw !== 0;
      if (raw instanceof PyFloat) return raw.value !== 0;
      const s = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
      if (['true', '1', 'yes', 'y', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'n', 'off'].includes(s)) return false;
      throw castError(v, 'boolean', raw);
    }
    case 'list':
    case 'dict':
      return raw;
    default:
      throw planError(
        { doc: v.where.doc, path: [...v.where.path, 'type'] },
        'plan.variable_type',
        `'${type}' is not a valid VariableType (variable '${v.name}')`,
        `use one of: ${VARIABLE_TYPES.join(', ')}`,
      );
  }
}

/** Scope entries for resolved variables: `variables.X` and bare `X`, each a DomainValue. */
export function variableScope(vars: Map<string, ResolvedVariable>, extras: Scope = {}): Scope {
  const ns: Record<string, Value> = withoutPrototype({});
  const scope: Scope = withoutPrototype({});
  for (const v of vars.values()) {
    const dv = new DomainValue(v.value, v.domain);
    ns[v.name] = dv;
    scope[v.name] = dv;
  }
  Object.assign(scope, extras);
  scope.variables = ns;
  return scope;
}

/** Adds one resolved variable to a scope built by `variableScope` (bare names of `extras` win). */
function addToScope(scope: Scope, v: ResolvedVariable, extras: Scope): void {
  const dv = new DomainValue(v.value, v.domain);
  const ns = scope.variables;
  if (isDict(ns)) ns[v.name] = dv;
  if (!Object.hasOwn(extras, v.name)) scope[v.name] = dv;
}

/**
 * The variables among `names` that the expression `source` reads by name (`X`, `variables.X`);
 * null when it reads `variables` with a computed key (it may read any of them).
 */
function staticDeps(source: string, names: Set<string>): string[] | null {
  let refs: RefPath[];
  try {
    refs = compileCached(source).references();
  } catch {
    return []; // a syntax error: evaluating it reports the error
  }
  const out: string[] = [];
  for (const r of refs) {
    const name = r[0] === 'variables' ? r[1] : r[0];
    if (r[0] === 'variables' && r.length === 1) return null;
    if (typeof name === 'string' && names.has(name)) out.push(name);
  }
  return out;
}

/**
 * Evaluation order of expression-valued variables: each after the variables it reads (Kahn's
 * algorithm, declaration order among equals), so a chain of N variables resolves in N
 * evaluations. Variables in a cycle, or reading `variables[...]`, come last.
 */
function evaluationOrder(pending: RawVariable[]): RawVariable[] {
  const names = new Set(pending.map((v) => v.name));
  const waitsFor = new Map<RawVariable, number>();
  const readers = new Map<string, RawVariable[]>();
  const last = new Set<RawVariable>();
  for (const v of pending) {
    const deps = staticDeps(String(v.value), names);
    if (deps === null) {
      last.add(v);
      continue;
    }
    const unique = new Set(deps.filter((d) => d !== v.name));
    waitsFor.set(v, unique.size);
    for (const d of unique) {
      const list = readers.get(d);
      if (list) list.push(v);
      else readers.set(d, [v]);
    }
    if (deps.includes(v.name)) last.add(v); // reads itself: a cycle
  }
  const order: RawVariable[] = pending.filter((v) => waitsFor.get(v) === 0 && !last.has(v));
  for (let i = 0; i < order.length; i++) {
    for (const r of readers.get(order[i].name) ?? []) {
      const n = (waitsFor.get(r) ?? 0) - 1;
      waitsFor.set(r, n);
      if (n === 0 && !last.has(r)) order.push(r);
    }
  }
  const placed = new Set(order);
  for (const v of pending) if (!placed.has(v)) order.push(v);
  return order;
}

/**
 * Resolve `raw` on top of `already` (resolved globals, for the workflow stage). Later entries of
 * `raw` replace same-named ones of `already`. Expression values are evaluated in dependency
 * order (linear in the number of variables); what that leaves unresolved (values computed from
 * `variables[...]`, expressions yielding expressions) is retried until nothing changes.
 */
export function resolveVariables(
  raw: RawVariable[],
  already: Map<string, ResolvedVariable>,
  extras: Scope,
): Map<string, ResolvedVariable> {
  const out = new Map(already);
  const expressions = new Map<string, RawVariable>();
  for (const v of raw) {
    out.delete(v.name);
    expressions.delete(v.name);
    if (typeof v.value === 'string' && hasExpression(v.value)) expressions.set(v.name, v);
    else {
      const yamlFloat = isYamlFloat(v.docItem, 'value');
      out.set(v.name, resolved(v, castVariable(v, cleanRead(v.value) ?? null, yamlFloat)));
    }
  }
  const lastError = new Map<string, SflowError>();
  /** evaluates `v` against `scope`; true when it resolved (and is now in `out`) */
  const tryResolve = (v: RawVariable, scope: Scope): boolean => {
    let value: Value;
    try {
      value = evaluateField(v.value, scope, { doc: v.where.doc, path: [...v.where.path, 'value'] });
    } catch (e) {
      if (e instanceof SflowError && (e.code === 'plan.undefined' || e.code === 'plan.eval')) {
        lastError.set(v.name, e);
        return false;
      }
      throw e;
    }
    if (typeof value === 'string' && hasExpression(value)) return false;
    const r = resolved(v, castVariable(v, value, false));
    out.set(v.name, r);
    addToScope(scope, r, extras);
    return true;
  };
  const first = variableScope(out, extras);
  let pending = evaluationOrder([...expressions.values()]).filter((v) => !tryResolve(v, first));
  for (let pass = 0; pass <= raw.length && pending.length > 0; pass++) {
    const scope = variableScope(out, extras);
    const before = pending.length;
    pending = pending.filter((v) => !tryResolve(v, scope));
    if (pending.length === before) break;
  }
  if (pending.length) {
    // spec: reported as unresolved, not individually — but pointing at the cause where there is
    // one (a variable whose own expression fails while everything it reads resolved)
    const stuck = new Set(pending.map((v) => v.name));
    const cause = pending.find(
      (v) => lastError.has(v.name) && (staticDeps(String(v.value), stuck) ?? ['?']).length === 0,
    );
    const at = cause ?? pending[0];
    const names = pending.map((v) => v.name).sort();
    const shown = names.length > 12 ? [...names.slice(0, 12), `… (${names.length} in all)`] : names;
    throw planError(
      { doc: at.where.doc, path: [...at.where.path, 'value'] },
      'plan.unresolved_variables',
      `Unresolved variable expressions (missing refs or cycle): ${shown.join(', ')}`,
      lastError.get(at.name)?.message ??
        'a variable may only reference variables (and, in workflow.variables, backends/artifacts/workflow); check for cycles',
    );
  }
  return out;
}

function resolved(v: RawVariable, value: Value): ResolvedVariable {
  refuseNulInVariable(v.name, value, v.domain, v.where);
  return {
    name: v.name,
    value,
    type: v.type ?? 'string',
    domain: Array.isArray(v.domain) ? v.domain.map((d) => cleanRead(d) ?? null) : null,
    description: v.description ?? undefined,
  };
}
