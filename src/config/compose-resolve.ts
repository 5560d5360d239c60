/**
 * `sflow compose --resolve` (spec config.md §4.8): inline every variable that resolves from other
 * variables alone, except those that drive sweeps or replica counts; leave runtime-dependent
 * expressions (backends, task, artifacts) in place.
 */
import { hasExpression, renderValue, toNative, type Value } from './expr/index.js';
import { compileCached } from './templates.js';
import { isPlainObject } from './collections.js';
import { resolveVariables, variableScope, type RawVariable } from '../plan/variables.js';

type Obj = Record<string, any>;

const BUILTIN_ENV = /^(CUDA_VISIBLE_DEVICES|SLURM_\w+|HOME|USER|PATH|PWD|HOSTNAME|SHELL|LANG|TERM|COLUMNS|IFS|SFLOW_\w+)$/;
const EXPR = /\$\{\{([\s\S]*?)\}\}/g;

function refsOf(source: string): (string | number)[][] {
  return compileCached(source).references();
}

function rootVar(ref: (string | number)[]): string | undefined {
  if (ref[0] === 'variables' && typeof ref[1] === 'string') return ref[1];
  if (typeof ref[0] === 'string' && !['backends', 'artifacts', 'workflow', 'task', 'range', 'env'].includes(ref[0])) return ref[0];
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
  const vars = (doc.variables as Obj[] | undefined) ?? [];
  // 1. which variables resolve from variables alone
  const resolved = new Map<string, Value>();
  const pending = vars.filter((v) => typeof v.value === 'string' && hasExpression(v.value));
  for (const v of vars) if (!(typeof v.value === 'string' && hasExpression(v.value))) resolved.set(String(v.name), v.value as Value);
  let progress = true;
  while (progress && pending.length) {
    progress = false;
    for (let i = 0; i < pending.length; i++) {
      const v = pending[i];
      const refs = referencedVars(String(v.value));
      if (!refs || ![...refs].every((r) => resolved.has(r))) continue;
      const raw: RawVariable[] = [...vars.filter((x) => resolved.has(String(x.name))), v].map((x) => ({
        name: String(x.name),
        value: x.name === v.name ? v.value : resolved.get(String(x.name)),
        type: (x.type as string) ?? null,
        domain: (x.domain as unknown[]) ?? null,
        where: { doc, path: ['variables'] },
        docItem: x,
      }));
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
    for (const k of ['count', 'policy']) if (typeof r[k] === 'string' && hasExpression(r[k])) for (const n of referencedVars(r[k]) ?? []) keep.add(n);
  }
  for (const k of keep) resolved.delete(k);
  const scopeVars = new Map([...resolved].map(([name, value]) => [name, { name, value, type: 'string', domain: null }]));
  const scope = variableScope(scopeVars);
  const substitute = (s: string): unknown => {
    let out: unknown = s;
    if (hasExpression(s)) {
      const whole = /^\$\{\{[\s\S]*?\}\}$/.test(s) && s.indexOf('${{', 1) < 0;
      if (whole) {
        const refs = referencedVars(s);
        if (refs && [...refs].every((r) => resolved.has(r))) return coerce(toNative(compileCached(s) && evaluateWhole(s, scope)));
      }
      out = s.replace(EXPR, (m) => {
        const refs = referencedVars(m);
        if (!refs || ![...refs].every((r) => resolved.has(r))) return m;
        return renderValue(evaluateWhole(m, scope));
      });
    }
    if (typeof out === 'string') {
      out = out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) =>
        resolved.has(name) && !BUILTIN_ENV.test(name) ? renderValue(resolved.get(name)!) : m,
      );
      out = (out as string).replace(/\s+$/, '');
    }
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return substitute(v);
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const out: Obj = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'variables') {
      const left = vars.filter((x) => !resolved.has(String(x.name))).map((x) => walk(x));
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

import { evaluateTemplate } from './expr/index.js';

function evaluateWhole(s: string, scope: ReturnType<typeof variableScope>): Value {
  return evaluateTemplate(compileCached(s), scope);
}

function coerce(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (/^[-+]?\d+$/.test(v)) return parseInt(v, 10);
  if (/^[-+]?\d*\.\d+([eE][-+]?\d+)?$/.test(v)) return Number(v);
  if (v === 'true' || v === 'True') return true;
  if (v === 'false' || v === 'False') return false;
  return v;
}
