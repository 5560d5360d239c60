/**
 * Probes → PlannedProbe (spec config.md §1.14, §5.9). The timing fields every probe has resolve
 * here; the kind's own body is planned by its module in the probe registry
 * (src/probes/registry.ts), through a kit that resolves expressions and locates errors under the
 * kind's key. Per-instance facts (default tcp hosts, the watched task's instance) are filled in by
 * the kind after placement.
 */
import { checkDelay } from './limits.js';
import { toNative, type Scope } from '../config/expr/index.js';
import type { ProbePlanKit } from '../probes/kind.js';
import { PROBE_KIND_NAMES, probeKind, type PlannedProbe, type ProbeDraft } from '../probes/registry.js';
import type { PlannedBackend, PlannedNode } from './types.js';
import { evaluateField, planError, renderField, resolveInt, type Where } from '../config/resolve.js';

export type { ProbeDraft };

/** A probe as the schema leaves it: one kind key, the timing keys. */
type ProbeEntry = { readonly [key: string]: unknown };

function asList(v: unknown): ProbeEntry[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).filter((p): p is ProbeEntry => typeof p === 'object' && p !== null);
}

export function draftProbes(
  taskName: string,
  probes: ProbeEntry | null | undefined,
  scope: Scope,
  where: Where,
  backend: Pick<PlannedBackend, 'name' | 'capabilities'>,
): ProbeDraft[] {
  const out: ProbeDraft[] = [];
  if (!probes) return out;
  for (const role of ['readiness', 'failure'] as const) {
    const list = Array.isArray(probes[role]);
    asList(probes[role]).forEach((p, i) => {
      const pw: Where = { doc: where.doc, path: [...where.path, 'probes', role, ...(list ? [i] : [])] };
      out.push(draftOne(taskName, role, p, scope, pw, backend));
    });
  }
  return out;
}

function planKit(
  task: string,
  role: 'readiness' | 'failure',
  scope: Scope,
  kw: Where,
  backend: Pick<PlannedBackend, 'name' | 'capabilities'>,
): ProbePlanKit {
  const at = (path: string | (string | number)[] | undefined): Where => ({
    doc: kw.doc,
    path: [...kw.path, ...(path === undefined ? [] : Array.isArray(path) ? path : [path])],
  });
  return {
    task,
    role,
    backend: `'${backend.name}' (${backend.capabilities.label})`,
    probesFrom: backend.capabilities.probesFrom,
    int: (value, path, label) => resolveInt(value, scope, at(path), label),
    text: (value, path) => renderField(String(value), scope, at(path)),
    value: (value, path) => toNative(evaluateField(value, scope, at(path))),
    fail: (path, code, message, hint) => {
      throw planError(at(path), code, message, hint);
    },
  };
}

function draftOne(
  taskName: string,
  role: 'readiness' | 'failure',
  p: ProbeEntry,
  scope: Scope,
  where: Where,
  backend: Pick<PlannedBackend, 'name' | 'capabilities'>,
): ProbeDraft {
  const kind = PROBE_KIND_NAMES.find((k) => p[k] !== undefined && p[k] !== null);
  if (!kind)
    throw planError(
      where,
      'plan.probe_kind',
      `probe of task '${taskName}' has no type`,
      `use one of ${PROBE_KIND_NAMES.join(', ')}`,
    );
  const num = (key: string, def: number, min: number, delay = true): number => {
    if (p[key] === undefined || p[key] === null) return def;
    const at: Where = { doc: where.doc, path: [...where.path, key] };
    const v = resolveInt(p[key], scope, at, `${role} probe ${key} of task '${taskName}'`);
    if (v < min) {
      throw planError(
        at,
        'plan.probe_range',
        `${role} probe ${key} of task '${taskName}' must be ${min === 0 ? '>= 0' : '> 0'}, got ${v}`,
      );
    }
    if (delay) checkDelay(v, `${role} probe ${key} of task '${taskName}'`, at);
    return v;
  };
  const common = {
    role,
    delayS: num('delay', 0, 0),
    timeoutS: num('timeout', 1200, 0),
    eachCheckTimeoutS: num('each_check_timeout', 30, 0),
    intervalS: num('interval', 5, 0),
    successThreshold: num('success_threshold', 1, 1, false),
    failureThreshold: num('failure_threshold', 3, 1, false),
    ...(role === 'failure' ? { onError: p.on_error === 'warn' ? ('warn' as const) : ('fail' as const) } : {}),
  };
  const kw: Where = { doc: where.doc, path: [...where.path, kind] };
  const fields = probeKind(kind).plan(p[kind], planKit(taskName, role, scope, kw, backend));
  return { kind, ...common, fields } as ProbeDraft;
}

/** Fill in per-instance facts: default tcp hosts, the concrete task whose log is watched. */
export function finaliseProbe(
  d: ProbeDraft,
  nodes: PlannedNode[],
  ownName: string,
  loggerInstance: (base: string) => string,
): PlannedProbe {
  const { fields, ...common } = d;
  const own = probeKind(d.kind).place(fields, {
    nodeIps: nodes.map((n) => n.ip),
    ownName,
    instanceOf: loggerInstance,
  });
  return { ...common, ...own } as PlannedProbe;
}
