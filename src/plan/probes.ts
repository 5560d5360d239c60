/**
 * Probes → PlannedProbe (spec config.md §1.14, §5.9). Timing fields and ports resolve at plan
 * time; the default tcp host (the task's first node) is filled in after placement.
 */
import { checkDelay } from './limits.js';
import { toNative, type Scope } from '../config/expr/index.js';
import type { PlannedNode, PlannedProbe, ProbeKind } from './types.js';
import { evaluateField, planError, renderField, resolveInt, type Where } from '../config/resolve.js';

type Obj = Record<string, unknown>;

const KINDS: ProbeKind[] = ['tcp_port', 'http_get', 'http_post', 'log_watch'];

export interface ProbeDraft extends Omit<PlannedProbe, 'hosts' | 'logTask'> {
  /** base name of the watched task (log_watch with `logger`) */
  logger?: string;
}

function asList(v: unknown): Obj[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]) as Obj[];
}

export function draftProbes(
  taskName: string,
  probes: Obj | null | undefined,
  scope: Scope,
  where: Where,
): ProbeDraft[] {
  const out: ProbeDraft[] = [];
  if (!probes) return out;
  for (const role of ['readiness', 'failure'] as const) {
    asList(probes[role]).forEach((p, i) => {
      const list = Array.isArray(probes[role]);
      const pw: Where = { doc: where.doc, path: [...where.path, 'probes', role, ...(list ? [i] : [])] };
      out.push(draftOne(taskName, role, p, scope, pw));
    });
  }
  return out;
}

function draftOne(
  taskName: string,
  role: 'readiness' | 'failure',
  p: Obj,
  scope: Scope,
  where: Where,
): ProbeDraft {
  const kind = KINDS.find((k) => p[k] !== undefined && p[k] !== null);
  if (!kind)
    throw planError(
      where,
      'plan.probe_kind',
      `probe of task '${taskName}' has no type`,
      `use one of ${KINDS.join(', ')}`,
    );
  const num = (key: string, def: number, min: number, delay = true): number => {
    if (p[key] === undefined || p[key] === null) return def;
    const v = resolveInt(
      p[key],
      scope,
      { doc: where.doc, path: [...where.path, key] },
      `${role} probe ${key} of task '${taskName}'`,
    );
    if (v < min) {
      throw planError(
        { doc: where.doc, path: [...where.path, key] },
        'plan.probe_range',
        `${role} probe ${key} of task '${taskName}' must be ${min === 0 ? '>= 0' : '> 0'}, got ${v}`,
      );
    }
    if (delay)
      checkDelay(v, `${role} probe ${key} of task '${taskName}'`, {
        doc: where.doc,
        path: [...where.path, key],
      });
    return v;
  };
  const body = p[kind] as Obj;
  const kw: Where = { doc: where.doc, path: [...where.path, kind] };
  const draft: ProbeDraft = {
    role,
    kind,
    delayS: num('delay', 0, 0),
    timeoutS: num('timeout', 1200, 0),
    eachCheckTimeoutS: num('each_check_timeout', 30, 0),
    intervalS: num('interval', 5, 0),
    successThreshold: num('success_threshold', 1, 1, false),
    failureThreshold: num('failure_threshold', 3, 1, false),
    ...(role === 'failure' ? { onError: p.on_error === 'warn' ? ('warn' as const) : ('fail' as const) } : {}),
  };
  if (kind === 'tcp_port') {
    draft.port = resolveInt(
      body.port,
      scope,
      { doc: where.doc, path: [...kw.path, 'port'] },
      `tcp_port.port of task '${taskName}'`,
    );
    if (body.host !== undefined && body.host !== null)
      draft.host = renderField(String(body.host), scope, { doc: where.doc, path: [...kw.path, 'host'] });
    draft.onNode = body.on_node === 'each' ? 'each' : 'first';
  } else if (kind === 'http_get' || kind === 'http_post') {
    const url = renderField(String(body.url), scope, { doc: where.doc, path: [...kw.path, 'url'] });
    if (!/^https?:\/\//i.test(url)) {
      throw planError(
        { doc: where.doc, path: [...kw.path, 'url'] },
        'plan.probe_url',
        `${kind} probe of task '${taskName}': unsupported URL scheme in '${url}'`,
        'use an http:// or https:// URL',
      );
    }
    draft.url = url;
    if (body.headers)
      draft.headers = Object.fromEntries(Object.entries(body.headers as Obj).map(([k, v]) => [k, String(v)]));
    if (body.expected_status !== undefined && body.expected_status !== null) {
      draft.expectStatus = (
        Array.isArray(body.expected_status) ? body.expected_status : [body.expected_status]
      ).map(Number);
    }
    if (typeof body.body_match === 'string') draft.bodyMatch = body.body_match;
    if (kind === 'http_post')
      draft.body =
        body.body === undefined || body.body === null
          ? ''
          : renderField(String(body.body), scope, { doc: where.doc, path: [...kw.path, 'body'] });
  } else {
    draft.pattern = String(body.regex_pattern ?? body.match_pattern);
    draft.matchCount =
      body.match_count === undefined || body.match_count === null
        ? 1
        : Number(
            toNative(
              evaluateField(body.match_count, scope, { doc: where.doc, path: [...kw.path, 'match_count'] }),
            ),
          );
    if (!Number.isInteger(draft.matchCount) || draft.matchCount < 1) {
      throw planError(
        { doc: where.doc, path: [...kw.path, 'match_count'] },
        'plan.probe_range',
        `log_watch.match_count of task '${taskName}' must be an integer > 0`,
      );
    }
    if (body.logger) draft.logger = String(body.logger);
  }
  return draft;
}

/** Fill in per-instance facts: default tcp hosts, the concrete task whose log is watched. */
export function finaliseProbe(
  d: ProbeDraft,
  nodes: PlannedNode[],
  ownName: string,
  loggerInstance: (base: string) => string,
): PlannedProbe {
  const { logger, ...rest } = d;
  const probe: PlannedProbe = { ...rest };
  if (d.kind === 'tcp_port') {
    const first = d.host ?? nodes[0]?.ip ?? '127.0.0.1';
    probe.host = first;
    probe.hosts =
      d.onNode === 'each' && !d.host && nodes.length
        ? [...new Set(nodes.map((n) => n.ip || first))]
        : [first];
  }
  if (d.kind === 'log_watch') probe.logTask = logger ? loggerInstance(logger) : ownName;
  return probe;
}
