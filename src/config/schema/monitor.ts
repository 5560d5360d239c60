/** `workflow.monitor` / `task.monitor` (monitor.md §2). Monitor fields are literal: no `${{ }}`. */
import * as z from 'zod';
import { atom, bool, describe, fail, isExpr, isPlainObject, literalInt, oneOf, str } from './common.js';
import { dispatch, list, strictObject, strList } from './shapes.js';
import { GpusRequestSchema, NodesRequestSchema } from './resources.js';
import { errorMessage } from '../../util/errors.js';

export const MONITOR_SCOPES = ['cpu', 'gpu', 'memory', 'disk', 'network'] as const;
export const MONITOR_DEFAULTS = {
  interval: 5000,
  reportEnabled: true,
  reportFormat: ['csv', 'svg'],
} as const;

const interval = () => literalInt({ min: 100 }).optional();

const ScopeSchema = (name: string) =>
  strictObject(`monitor scope '${name}'`, { enabled: bool().optional(), interval: interval() })
    .nullable()
    .transform((s) => s ?? {});

/** nvidia-smi query names: a list or one comma-separated string; must start with `index`. */
const GpuFields = atom<string | string[]>(
  { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  (v) => {
    const items = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
    if (!items?.every((x): x is string => typeof x === 'string'))
      return `expected a list of nvidia-smi field names (or one comma-separated string), got ${describe(v)}`;
    const toks = items.map((x) => x.trim()).filter(Boolean);
    if (toks.length === 0) return 'monitor.scopes.gpu.fields cannot be empty';
    if (toks[0].toLowerCase() !== 'index')
      return `monitor.scopes.gpu.fields must start with 'index', got '${toks[0]}'`;
    return undefined;
  },
).transform((v) => (typeof v === 'string' ? v : v.map((x) => x.trim())));

const GpuScopeSchema = strictObject("monitor scope 'gpu'", {
  enabled: bool().optional(),
  interval: interval(),
  fields: GpuFields.optional(),
})
  .nullable()
  .transform((s) => s ?? {});

const ScopesSchema = strictObject('monitor.scopes', {
  cpu: ScopeSchema('cpu').optional(),
  gpu: GpuScopeSchema.optional(),
  memory: ScopeSchema('memory').optional(),
  disk: ScopeSchema('disk').optional(),
  network: ScopeSchema('network').optional(),
  custom: strictObject('monitor.scopes.custom', { script: list(str(), 'script', true) }).optional(),
});

/** A window marker: literal substring or `re:`/`regex:`; optionally `{pattern, select}`. */
const MarkerPattern = atom<string>({ type: 'string', minLength: 1 }, (v) => {
  if (typeof v !== 'string') return `expected a marker string, got ${describe(v)}`;
  const body = v.replace(/^(re|regex):/, '');
  if (body.trim() === '') return 'monitor.window pattern cannot be empty';
  if (body !== v) {
    try {
      new RegExp(body);
    } catch (e) {
      return `invalid monitor.window regex '${v}': ${errorMessage(e)}`;
    }
  }
  return undefined;
});

const MarkerObject = strictObject('monitor.window marker', {
  pattern: z.union([MarkerPattern, list(MarkerPattern, 'pattern', true)]),
  select: oneOf(['first', 'last']).optional(),
});
const MarkerSchema = dispatch([MarkerPattern, MarkerObject] as const, (v) =>
  isPlainObject(v) ? MarkerObject : MarkerPattern,
);

const MonitorResourcesSchema = strictObject('monitor.resources', {
  nodes: NodesRequestSchema.optional(),
  gpus: GpusRequestSchema.optional(),
  /** follow these tasks' nodes and GPUs (union); takes precedence */
  used_by_tasks: strList('used_by_tasks').optional(),
});

const monitorShape = {
  /** milliseconds, >= 100 */
  interval: interval(),
  resources: MonitorResourcesSchema.optional(),
  scopes: ScopesSchema.optional(),
  report: strictObject('monitor.report', {
    enabled: bool().optional(),
    format: list(oneOf(['csv', 'svg', 'png']), 'format').optional(),
  }).optional(),
};

function noExpressions(v: unknown, path: (string | number)[], ctx: Parameters<typeof fail>[0]): void {
  if (isExpr(v)) {
    fail(ctx, path, 'monitor fields are not expression-resolved; use a literal value');
    return;
  }
  if (Array.isArray(v)) v.forEach((x, i) => noExpressions(x, [...path, i], ctx));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) if (k !== 'custom') noExpressions(x, [...path, k], ctx);
}

function scopesActive(m: { scopes?: z.output<typeof ScopesSchema> }, ctx: Parameters<typeof fail>[0]) {
  if (!m.scopes || Object.keys(m.scopes).length === 0) return;
  const active =
    MONITOR_SCOPES.some((s) => m.scopes![s] && m.scopes![s].enabled !== false) || m.scopes.custom;
  if (!active)
    fail(
      ctx,
      ['scopes'],
      'monitor.scopes is set but no scope is active',
      `enable one of ${MONITOR_SCOPES.join(', ')} or add scopes.custom`,
    );
}

export const WorkflowMonitorSchema = strictObject('workflow.monitor', monitorShape, {
  window: "report windows are only supported on task monitors; move it to the task's monitor",
}).superRefine((m, ctx) => {
  noExpressions(m, [], ctx);
  scopesActive(m, ctx);
});

export const TaskMonitorSchema = strictObject('task monitor', {
  ...monitorShape,
  /** task monitors only: report window bounded by log markers */
  window: strictObject('monitor.window', { start: MarkerSchema, end: MarkerSchema }).optional(),
}).superRefine((m, ctx) => {
  noExpressions(m, [], ctx);
  scopesActive(m, ctx);
  if (m.window && m.report?.enabled === false)
    fail(ctx, ['window'], 'monitor.window requires report.enabled: true');
});

export type Monitor = z.output<typeof TaskMonitorSchema>;
export type WorkflowMonitor = z.output<typeof WorkflowMonitorSchema>;
