/**
 * Variable resolution (spec config.md §2.3) and casting (§2.2). Literal values are cast first, so
 * a bad `--set` is reported against the variable that was overridden; expression values are
 * resolved iteratively (declaration order does not matter) and cast as soon as they resolve.
 */
import { DomainValue, PyFloat, hasExpression, renderValue, type Scope, type Value } from './expr/index.js';
import { isYamlFloat } from './source.js';
import { evaluateField, planError, type Where } from './resolve.js';
import { SflowError } from './errors.js';

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
      if (typeof raw === 'string' && /^\s*[-+]?\d+\s*$/.test(raw)) return parseInt(raw, 10);
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
  const ns: Record<string, Value> = Object.create(null) as Record<string, Value>;
  const scope: Scope = Object.create(null) as Scope;
  for (const v of vars.values()) {
    const dv = new DomainValue(v.value, v.domain);
    ns[v.name] = dv;
    scope[v.name] = dv;
  }
  Object.assign(scope, extras);
  scope.variables = ns;
  return scope;
}

/**
 * Resolve `raw` on top of `already` (resolved globals, for the workflow stage). Later entries of
 * `raw` replace same-named ones of `already`.
 */
export function resolveVariables(
  raw: RawVariable[],
  already: Map<string, ResolvedVariable>,
  extras: Scope,
): Map<string, ResolvedVariable> {
  const out = new Map(already);
  const pending: RawVariable[] = [];
  for (const v of raw) {
    out.delete(v.name);
    if (typeof v.value === 'string' && hasExpression(v.value)) pending.push(v);
    else {
      const yamlFloat = isYamlFloat(v.docItem, 'value');
      const value = castVariable(
        v,
        (yamlFloat && typeof v.value === 'number' ? v.value : v.value) as Value,
        yamlFloat,
      );
      out.set(v.name, resolved(v, value));
    }
  }
  const lastError = new Map<string, string>();
  for (let pass = 0; pass <= raw.length && pending.length > 0; pass++) {
    const scope = variableScope(out, extras);
    let progress = false;
    for (let i = 0; i < pending.length;) {
      const v = pending[i];
      let value: Value;
      try {
        value = evaluateField(v.value, scope, { doc: v.where.doc, path: [...v.where.path, 'value'] });
      } catch (e) {
        if (e instanceof SflowError && (e.code === 'plan.undefined' || e.code === 'plan.eval')) {
          lastError.set(v.name, e.message);
          i++;
          continue;
        }
        throw e;
      }
      if (typeof value === 'string' && hasExpression(value)) {
        i++;
        continue;
      }
      out.set(v.name, resolved(v, castVariable(v, value, false)));
      pending.splice(i, 1);
      progress = true;
    }
    if (!progress) break;
  }
  if (pending.length) {
    const names = pending.map((v) => v.name).sort();
    const first = pending[0];
    throw planError(
      { doc: first.where.doc, path: [...first.where.path, 'value'] },
      'plan.unresolved_variables',
      `Unresolved variable expressions (missing refs or cycle): ${names.join(', ')}`,
      lastError.get(first.name) ??
        'a variable may only reference variables (and, in workflow.variables, backends/artifacts/workflow); check for cycles',
    );
  }
  return out;
}

function resolved(v: RawVariable, value: Value): ResolvedVariable {
  return {
    name: v.name,
    value,
    type: v.type ?? 'string',
    domain: Array.isArray(v.domain) ? (v.domain as Value[]) : null,
    description: v.description ?? undefined,
  };
}
