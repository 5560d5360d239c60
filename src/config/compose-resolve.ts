/**
 * `sflow compose --resolve` (spec config.md §4.8): inline every variable that resolves from other
 * variables alone, except those that drive sweeps or replica counts; leave runtime-dependent
 * expressions (backends, task, artifacts) in place.
 */
import { evaluateTemplate, hasExpression, renderValue, toNative, type Value } from './expr/index.js';
import { compileCached } from './templates.js';
import { isPlainObject } from './collections.js';
import { castVariable, resolveVariables, variableScope, type RawVariable } from './variables.js';
import { isYamlFloat } from './source.js';

type Obj = Record<string, unknown>;

const BUILTIN_ENV =
  /^(CUDA_VISIBLE_DEVICES|SLURM_\w+|HOME|USER|PATH|PWD|HOSTNAME|SHELL|LANG|TERM|COLUMNS|IFS|SFLOW_\w+)$/;
const EXPR = /\$\{\{([\s\S]*?)\}\}/g;

function refsOf(source: string): (string | number)[][] {
  return compileCached(source).references();
}

function rootVar(ref: (string | number)[]): string | undefined {
  if (ref[0] === 'variables' && typeof ref[1] === 'string') return ref[1];
  if (
    typeof ref[0] === 'string' &&
    !['backends', 'artifacts', 'workflow', 'task', 'range', 'env'].includes(ref[0])
  )
    return ref[0];
  return undefined;
}

function referencedVars(s: string): Set<string> | null {
  const out = new Set<string>();
  for (const r of refsOf(s)) {
    const v = rootVar(r);
    if (!v) return null;
    out.add(v);
  }
  return out;
}

export function resolveComposed(doc: Obj): Obj {
  const globals = (doc.variables as Obj[] | undefined) ?? [];
  const local = ((doc.workflow as Obj | undefined)?.variables as Obj[] | undefined) ?? [];
  // a name declared at both levels (the workflow one shadows the global one) stays a variable
  const shadowed = new Set(local.map((x) => String(x.name)).filter((n) => globals.some((g) => g.name === n)));
  const vars = [...globals, ...local].filter((x) => !shadowed.has(String(x.name)));
  const localNames = new Set(local.map((x) => String(x.name)));
  const rawOf = (x: Obj, value: unknown): RawVariable => ({
    name: String(x.name),
    value,
    type: (x.type as string) ?? null,
    domain: (x.domain as unknown[]) ?? null,
    where: { doc, path: ['variables'] },
    docItem: x,
  });
  // 1. which variables resolve from variables alone; values are cast to their types, as in a run
  const resolved = new Map<string, Value>();
  const pending = vars.filter((v) => typeof v.value === 'string' && hasExpression(v.value));
  for (const v of vars) {
    // a variable without a value has to be set at run time (--set): it stays a variable
    if (v.value === null || v.value === undefined || pending.includes(v)) continue;
    try {
      resolved.set(
        String(v.name),
        castVariable(rawOf(v, v.value), v.value as Value, isYamlFloat(v, 'value')),
      );
    } catch {
      /* a value that does not cast stays a variable: the run reports it */
    }
  }
  let progress = true;
  while (progress && pending.length) {
    progress = false;
    for (let i = 0; i < pending.length; i++) {
      const v = pending[i];
      const refs = referencedVars(String(v.value));
      if (!refs || ![...refs].every((r) => resolved.has(r))) continue;
      // a global variable cannot see workflow variables (in a run it would not resolve either)
      if (globals.includes(v) && [...refs].some((r) => localNames.has(r))) continue;
      const raw = [...vars.filter((x) => resolved.has(String(x.name))), v].map((x) =>
        rawOf(x, x === v ? v.value : resolved.get(String(x.name))),
      );
      try {
        const r = resolveVariables(raw, new Map(), {});
        resolved.set(String(v.name), r.get(String(v.name))!.value);
        pending.splice(i, 1);
        i--;
        progress = true;
      } catch {
        /* leave it unresolved */
      }
    }
  }
  // 2. keep sweep / replica-count variables
  const keep = new Set<string>();
  const tasks = ((doc.workflow as Obj | undefined)?.tasks as Obj[] | undefined) ?? [];
  for (const t of tasks) {
    const r = t.replicas as Obj | undefined;
    if (!r) continue;
    for (const n of (r.variables as string[] | undefined) ?? []) keep.add(n);
    for (const k of ['count', 'policy'])
      if (typeof r[k] === 'string' && hasExpression(r[k]))
        for (const n of referencedVars(r[k]) ?? []) keep.add(n);
  }
  for (const k of keep) resolved.delete(k);
  const scopeVars = new Map(
    [...resolved].map(([name, value]) => [name, { name, value, type: 'string', domain: null }]),
  );
  const scope = variableScope(scopeVars);
  // inside the global `variables` section only globals can be inlined (a global cannot see workflow variables)
  const substitute = (s: string, globalOnly: boolean): unknown => {
    const known = (r: string) => resolved.has(r) && !(globalOnly && localNames.has(r));
    let out: unknown = s;
    if (hasExpression(s)) {
      const whole = /^\$\{\{[\s\S]*?\}\}$/.test(s) && s.indexOf('${{', 1) < 0;
      if (whole) {
        const refs = referencedVars(s);
        if (refs && [...refs].every(known)) {
          const v = tryEvaluate(s, scope);
          if (v !== undefined) return coerce(toNative(v));
        }
      }
      out = s.replace(EXPR, (m) => {
        const refs = referencedVars(m);
        if (!refs || ![...refs].every(known)) return m;
        const v = tryEvaluate(m, scope);
        return v === undefined ? m : renderValue(v);
      });
    }
    if (typeof out === 'string') {
      out = out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) =>
        known(name) && !BUILTIN_ENV.test(name) ? renderValue(resolved.get(name)!) : m,
      );
      out = (out as string).replace(/\s+$/, '');
    }
    return out;
  };
  const walk = (v: unknown, globalOnly = false): unknown => {
    if (typeof v === 'string') return substitute(v, globalOnly);
    if (Array.isArray(v)) return v.map((x) => walk(x, globalOnly));
    if (isPlainObject(v))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, globalOnly)]));
    return v;
  };
  const out: Obj = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'variables') {
      const left = globals.filter((x) => !resolved.has(String(x.name))).map((x) => walk(x, true));
      if (left.length) out.variables = left;
    } else if (k === 'workflow' && isPlainObject(v)) {
      const wf = walk(v) as Obj;
      if (Array.isArray(wf.variables)) {
        wf.variables = (wf.variables as Obj[]).filter((x) => !resolved.has(String(x.name)));
        if ((wf.variables as Obj[]).length === 0) delete wf.variables;
      }
      out.workflow = wf;
    } else out[k] = walk(v);
  }
  return out;
}

/** The value of `s`, or undefined when it does not evaluate (e.g. arithmetic on an untyped, string variable): then it is kept as written. */
function tryEvaluate(s: string, scope: ReturnType<typeof variableScope>): Value | undefined {
  try {
    return evaluateTemplate(compileCached(s), scope);
  } catch {
    return undefined;
  }
}

function coerce(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (/^[-+]?\d+$/.test(v)) return parseInt(v, 10);
  if (/^[-+]?\d*\.\d+([eE][-+]?\d+)?$/.test(v)) return Number(v);
  if (v === 'true' || v === 'True') return true;
  if (v === 'false' || v === 'False') return false;
  return v;
}
