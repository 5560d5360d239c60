/**
 * `sflow compose --resolve` (spec config.md §4.8): inline every variable that resolves from other
 * variables alone, except those that drive sweeps or replica counts; leave runtime-dependent
 * expressions (backends, task, artifacts) in place.
 */
import {
  cleanRead,
  evaluateTemplate,
  hasExpression,
  renderValue,
  toNative,
  type Value,
} from './expr/index.js';
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

/** The objects of a list in the (unvalidated) document; anything else holds none. */
function objects(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isPlainObject) : [];
}

/** The variable declarations of a document, and which of them may be inlined. */
interface Declared {
  doc: Obj;
  globals: Obj[];
  local: Obj[];
  /** the declarations that may be inlined (a name declared at both levels stays a variable) */
  vars: Obj[];
  localNames: Set<string>;
}

function declaredVariables(doc: Obj): Declared {
  const globals = objects(doc.variables);
  const local = isPlainObject(doc.workflow) ? objects(doc.workflow.variables) : [];
  // a name declared at both levels (the workflow one shadows the global one) stays a variable
  const shadowed = new Set(local.map((x) => String(x.name)).filter((n) => globals.some((g) => g.name === n)));
  const vars = [...globals, ...local].filter((x) => !shadowed.has(String(x.name)));
  return { doc, globals, local, vars, localNames: new Set(local.map((x) => String(x.name))) };
}

function rawOf(d: Declared, x: Obj, value: unknown): RawVariable {
  return {
    name: String(x.name),
    value,
    type: x.type === undefined || x.type === null ? null : String(x.type),
    domain: Array.isArray(x.domain) ? x.domain : null,
    where: { doc: d.doc, path: ['variables'] },
    docItem: x,
  };
}

/** Which variables resolve from variables alone; values are cast to their types, as in a run. */
function resolveFromVariables(d: Declared): Map<string, Value> {
  const { vars, globals, localNames } = d;
  const resolved = new Map<string, Value>();
  const pending = vars.filter((v) => typeof v.value === 'string' && hasExpression(v.value));
  for (const v of vars) {
    // a variable without a value has to be set at run time (--set): it stays a variable
    if (v.value === null || v.value === undefined || pending.includes(v)) continue;
    try {
      const value = cleanRead(v.value) ?? null;
      resolved.set(String(v.name), castVariable(rawOf(d, v, v.value), value, isYamlFloat(v, 'value')));
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
        rawOf(d, x, x === v ? v.value : resolved.get(String(x.name))),
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
  return resolved;
}

/** The variables that drive sweeps or replica counts: they stay variables. */
function sweepVariables(doc: Obj): Set<string> {
  const keep = new Set<string>();
  const tasks = isPlainObject(doc.workflow) ? objects(doc.workflow.tasks) : [];
  for (const t of tasks) {
    const r = t.replicas;
    if (!isPlainObject(r)) continue;
    if (Array.isArray(r.variables)) for (const n of r.variables) if (typeof n === 'string') keep.add(n);
    for (const k of ['count', 'policy']) {
      const e = r[k];
      if (typeof e === 'string' && hasExpression(e)) for (const n of referencedVars(e) ?? []) keep.add(n);
    }
  }
  return keep;
}

/** Inlines the resolved variables into one string: a whole-expression string becomes its value. */
function substituter(resolved: Map<string, Value>, localNames: Set<string>) {
  const scopeVars = new Map(
    [...resolved].map(([name, value]) => [name, { name, value, type: 'string', domain: null }]),
  );
  const scope = variableScope(scopeVars);
  // inside the global `variables` section only globals can be inlined (a global cannot see workflow variables)
  return (s: string, globalOnly: boolean): unknown => {
    const known = (r: string) => resolved.has(r) && !(globalOnly && localNames.has(r));
    let out = s;
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
    out = out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) =>
      known(name) && !BUILTIN_ENV.test(name) ? renderValue(resolved.get(name)!) : m,
    );
    return out.replace(/\s+$/, '');
  };
}

export function resolveComposed(doc: Obj): Obj {
  const declared = declaredVariables(doc);
  const resolved = resolveFromVariables(declared);
  for (const k of sweepVariables(doc)) resolved.delete(k);
  const substitute = substituter(resolved, declared.localNames);
  const walk = (v: unknown, globalOnly = false): unknown => {
    if (typeof v === 'string') return substitute(v, globalOnly);
    if (Array.isArray(v)) return v.map((x) => walk(x, globalOnly));
    if (isPlainObject(v)) return walkObject(v, globalOnly);
    return v;
  };
  const walkObject = (v: Obj, globalOnly = false): Obj =>
    Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, globalOnly)]));
  const isResolved = (x: unknown) => isPlainObject(x) && resolved.has(String(x.name));
  const out: Obj = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'variables') {
      const left = declared.globals.filter((x) => !isResolved(x)).map((x) => walk(x, true));
      if (left.length) out.variables = left;
    } else if (k === 'workflow' && isPlainObject(v)) {
      const wf = walkObject(v);
      if (Array.isArray(wf.variables)) {
        const left = wf.variables.filter((x) => !isResolved(x));
        if (left.length === 0) delete wf.variables;
        else wf.variables = left;
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
