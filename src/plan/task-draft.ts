/**
 * One declared task → its draft before placement: backend, operator, replica expansion, resolved
 * resources, retries, probes, fail_fast and the script lines that do not read `task.*` (those are
 * resolved by `finishScript` once every task is placed).
 */
import { didYouMean } from '../config/errors.js';
import { hasExpression, type Scope } from '../config/expr/index.js';
import { operatorOf } from '../operators/index.js';
import type { GpuRequest, NodeRequest } from './placement/types.js';
import { selectOperator } from './operators.js';
import { draftProbes, type ProbeDraft } from './probes.js';
import { expandReplicas, type Expansion } from './replicas.js';
import { checkDelay, type InstanceBudget } from './limits.js';
import {
  planError,
  renderField,
  resolveInt,
  resolveIntList,
  resolveOptionalInt,
  type Where,
} from '../config/resolve.js';
import { taskExpressionHint, type TaskFacts } from './task-namespace.js';
import type { PlannedBackend, PlannedOperator, PlannedTask, ReleaseAfter } from './types.js';
import type { ResolvedVariable } from '../config/variables.js';
import type { Operator, ResultSpec, Task } from '../config/schema/index.js';
import type { GpusRequest, NodesRequest } from '../config/schema/resources.js';

/** `resources.nodes` or `resources.gpus` as declared (only nodes has `exclude`) */
type RequestSpec = NodesRequest | GpusRequest;

export interface Draft {
  base: string;
  where: Where;
  /** the task as declared (its schema's type: expression fields not resolved yet) */
  item: Task;
  backend: PlannedBackend;
  operator: PlannedOperator;
  expansion: Expansion;
  resources: { nodes?: NodeRequest; gpus?: GpuRequest };
  hasResources: boolean;
  retries: PlannedTask['retries'];
  probes: ProbeDraft[];
  failFast: boolean;
  lines: string[];
  /** indices of lines that read `task.` and resolve after placement */
  pass2: number[];
}

export function draftTask(
  item: Task,
  where: Where,
  backends: PlannedBackend[],
  operators: readonly Operator[],
  vars: Map<string, ResolvedVariable>,
  scope: Scope,
  budget?: InstanceBudget,
  /** secret variables: a swept one's values never become names */
  secret?: ReadonlySet<string>,
): Draft {
  const base = String(item.name);
  const at = (...p: (string | number)[]): Where => ({ doc: where.doc, path: [...where.path, ...p] });
  const backend = taskBackend(item, base, at, backends);
  const operator = selectOperator(base, item.operator, backend, operators, scope, where);
  const expansion = expandReplicas(base, item.replicas, vars, scope, at('replicas'), budget, secret);
  const res = item.resources ?? {};
  const resources = taskResources(res, base, at, scope);
  const retries = item.retries ? taskRetries(item.retries, base, at, scope) : null;
  const probes = draftProbes(base, item.probes, scope, where, backend);
  const failFast =
    typeof item.fail_fast === 'boolean' ? item.fail_fast : backend.capabilities.failFastDefault;
  // scripts, pass 1
  const raw = item.script.map(String);
  const pass2: number[] = [];
  const lines = raw.map((line, i) => {
    if (hasExpression(line) && line.includes('task.')) {
      pass2.push(i);
      return line;
    }
    return renderField(line, scope, at('script', i));
  });
  return {
    base,
    where,
    item,
    backend,
    operator,
    expansion,
    resources,
    hasResources: Boolean(res.nodes || res.gpus),
    retries,
    probes,
    failFast,
    lines,
    pass2,
  };
}

type At = (...p: (string | number)[]) => Where;

/** the task's backend: the one it names, else the default (an inline backend is refused) */
function taskBackend(item: Task, base: string, at: At, backends: PlannedBackend[]): PlannedBackend {
  if (item.backend !== undefined && item.backend !== null && typeof item.backend !== 'string') {
    throw planError(
      at('backend'),
      'plan.inline_backend',
      `Inline backend overrides are not supported yet (task '${base}')`,
      'declare the backend under `backends:` and reference it by name',
    );
  }
  if (typeof item.backend === 'string') {
    const b = backends.find((x) => x.name === item.backend);
    if (!b) {
      const names = backends.map((x) => x.name);
      throw planError(
        at('backend'),
        'plan.unknown_backend',
        `task '${base}' references unknown backend '${item.backend}'`,
        didYouMean(item.backend, names) ?? `declared backends: ${names.join(', ')}`,
      );
    }
    return b;
  }
  return backends.find((b) => b.isDefault) ?? backends[0];
}

/** `resources.nodes` / `resources.gpus` with their expressions resolved */
function taskResources(
  res: NonNullable<Task['resources']>,
  base: string,
  at: At,
  scope: Scope,
): Draft['resources'] {
  const resources: Draft['resources'] = {};
  /** `resources.<kind>`: `count` is one int; `indices`/`exclude` are lists (or one expression yielding a list) */
  const resolveRequest = (spec: RequestSpec, kind: 'nodes' | 'gpus') => {
    const out: { indices?: number[]; count?: number; exclude?: number[]; releaseAfter?: ReleaseAfter } = {};
    const where = (f: string) => at('resources', kind, f);
    const label = (f: string) => `resources.${kind}.${f} of task '${base}'`;
    const indices = resolveIntList(spec.indices, scope, where('indices'), label('indices'));
    if (indices !== undefined) out.indices = indices;
    const count = resolveOptionalInt(spec.count, scope, where('count'), label('count'));
    if (count !== undefined) out.count = count;
    if ('exclude' in spec) {
      const exclude = resolveIntList(spec.exclude, scope, where('exclude'), label('exclude'));
      if (exclude !== undefined) out.exclude = exclude;
    }
    if (spec.release_after) out.releaseAfter = spec.release_after;
    return out;
  };
  if (res.nodes) resources.nodes = resolveRequest(res.nodes, 'nodes');
  if (res.gpus) resources.gpus = resolveRequest(res.gpus, 'gpus');
  return resources;
}

/** `retries:` resolved and bounded (count >= 0, interval >= 0, backoff >= 1, the longest wait checked) */
function taskRetries(
  r: NonNullable<Task['retries']>,
  base: string,
  at: At,
  scope: Scope,
): NonNullable<Draft['retries']> {
  const count = resolveInt(r.count, scope, at('retries', 'count'), `retries.count of task '${base}'`);
  const intervalS = resolveInt(
    r.interval,
    scope,
    at('retries', 'interval'),
    `retries.interval of task '${base}'`,
  );
  const backoff =
    r.backoff === undefined || r.backoff === null
      ? 1
      : resolveInt(r.backoff, scope, at('retries', 'backoff'), `retries.backoff of task '${base}'`);
  if (count < 0)
    throw planError(
      at('retries', 'count'),
      'plan.retries',
      `retries.count of task '${base}' must be >= 0, got ${count}`,
    );
  if (intervalS < 0)
    throw planError(
      at('retries', 'interval'),
      'plan.retries',
      `retries.interval of task '${base}' must be >= 0, got ${intervalS}`,
    );
  if (backoff < 1)
    throw planError(
      at('retries', 'backoff'),
      'plan.retries',
      `retries.backoff of task '${base}' must be >= 1, got ${backoff}`,
    );
  // the longest wait is the one before the last attempt: interval × backoff^(count-1)
  if (count > 0)
    checkDelay(
      intervalS * Math.pow(backoff, count - 1),
      `the wait before the last retry of task '${base}' (retries.interval × backoff^(count-1))`,
      at('retries', 'interval'),
    );
  return { count, intervalS, backoff };
}

export function finishScript(d: Draft, taskScope: Scope, facts: TaskFacts[]): string {
  const lines = [...d.lines];
  for (const i of d.pass2) {
    try {
      lines[i] = renderField(lines[i], taskScope, { doc: d.where.doc, path: [...d.where.path, 'script', i] });
    } catch (e) {
      const expr = /\$\{\{(.*?)\}\}/.exec(lines[i])?.[0] ?? lines[i];
      throw planError(
        { doc: d.where.doc, path: [...d.where.path, 'script', i] },
        'plan.task_expression',
        `Failed to resolve task expression in '${d.base}' script: ${expr}${e instanceof Error ? ` (${e.message.split('\n')[0]})` : ''}`,
        taskExpressionHint(lines[i], facts),
      );
    }
  }
  let script = lines.join('\n');
  if (d.failFast && operatorOf(d.operator.type)?.shell) script = `set -e\n${script}`;
  return script;
}

export function plannedResult(r: ResultSpec | undefined): PlannedTask['result'] {
  if (!r || typeof r !== 'object') return null;
  const patterns = (r.patterns ?? []).map((p) => ({
    name: String(p.name),
    regex: String(p.regex),
    type: p.type ?? 'auto',
    unit: p.unit ?? null,
    aggregate: p.aggregate ?? 'last',
    required: p.required === true,
    ...(p.group !== undefined && p.group !== null ? { group: p.group } : {}),
  }));
  return { patterns, ...(r.file ? { file: String(r.file) } : {}) };
}
