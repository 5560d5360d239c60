/**
 * The plan-time monitor schedule (monitor.md §4, §6.1): which collectors run on which physical
 * node with which scopes, and which report folders are built after the run from which resources
 * over which time window. Pure, from the Plan; `--dry-run` prints it, the runtime hook executes it.
 *
 * Choices (docs/monitor.md): every planned collector spans the whole run (started before the
 * first task, stopped at teardown); reports are clipped later. All nodes of the local backend are
 * one physical host, so they share one collector.
 */
import type { BackendType, Plan, PlannedNode, PlannedTask } from './types.js';
import {
  SCOPE_ORDER,
  describeMarker,
  normalizeMonitor,
  selectNodes,
  type MonitorSpec,
  type ReportFormat,
  type Scope,
  type WindowSpec,
} from './monitor-config.js';

/** One node's share of a report: which GPUs (physical indices) count for it. */
export interface MonitorTarget {
  /** physical host key (one collector per key) */
  host: string;
  /** 'all': every GPU of the node; 'none': no GPU data (the task reserved none); else a subset */
  gpus: number[] | 'all' | 'none';
}

export interface CollectorPlan {
  host: string;
  backend: string;
  backendType: BackendType;
  node: PlannedNode;
  /** the node's index in its backend allocation (raw file names: `_node_<id>_`) */
  nodeId: number;
  /** active scopes → interval (the smallest any covering monitor asks for) */
  scopes: Partial<Record<Scope, number>>;
  tickMs: number;
  gpuFields: string[];
  custom: string[];
}

export interface ReportView {
  /** relative to `sflow_monitor/`, with a trailing slash */
  path: string;
  group: 'lifecycle' | 'windowed';
  note: string;
  /** whose run window clips the report (null: the whole run) */
  windowTask: string | null;
  /** windowed reports: the markers, matched in `windowTask`'s log */
  window: WindowSpec | null;
  targets: MonitorTarget[];
  scopes: Scope[];
  formats: ReportFormat[];
}

export interface MonitorSchedule {
  monitors: MonitorSpec[];
  collectors: CollectorPlan[];
  views: ReportView[];
  warnings: string[];
}

type PlanPart = Pick<Plan, 'tasks' | 'backends' | 'workflowMonitor'>;

/** Why a schedule plans no report folder, in a few words (the dry-run and sflow_monitor.log say it). */
export function noReportsReason(s: Pick<MonitorSchedule, 'monitors'>): string {
  if (s.monitors.length === 0) return 'no monitor runs on these backends (see the warning)';
  if (s.monitors.every((m) => !m.report.enabled)) return 'report.enabled is false';
  return 'no report window ran';
}

const NOT_SAMPLED = 'node-level hardware monitoring is not implemented for this backend yet';

/** Synthetic nodes (local) are all this machine: one host, one collector. */
export function hostKey(synthetic: boolean, node: PlannedNode): string {
  return synthetic ? 'localhost' : node.name;
}

/** The backends' capabilities as the schedule reads them (a backend missing from the plan counts as local-like). */
function traitsOf(plan: PlanPart): (backend: string) => { monitor: boolean; synthetic: boolean } {
  const by = new Map(plan.backends.map((b) => [b.name, b]));
  return (backend) => {
    const c = by.get(backend)?.capabilities;
    return { monitor: c?.monitor ?? true, synthetic: c?.syntheticNodes ?? false };
  };
}

function taskTargets(t: PlannedTask, synthetic: boolean, m?: MonitorSpec): MonitorTarget[] {
  const hosts = [...new Set(t.nodes.map((n) => hostKey(synthetic, n)))];
  let gpus: MonitorTarget['gpus'] = t.gpus === null ? 'none' : [...t.gpus];
  if (m?.gpus?.indices) gpus = [...m.gpus.indices];
  else if (m?.gpus?.count !== undefined)
    gpus = Array.isArray(gpus) ? gpus.slice(0, m.gpus.count) : range(m.gpus.count);
  return hosts.map((host) => ({ host, gpus }));
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function mergeTargets(list: MonitorTarget[]): MonitorTarget[] {
  const by = new Map<string, MonitorTarget>();
  for (const t of list) {
    const prev = by.get(t.host);
    if (!prev || prev.gpus === 'all' || t.gpus === 'all')
      by.set(t.host, prev && (prev.gpus === 'all' || t.gpus === 'all') ? { host: t.host, gpus: 'all' } : t);
    else if (prev.gpus === 'none') by.set(t.host, t);
    else if (t.gpus !== 'none')
      by.set(t.host, { host: t.host, gpus: [...new Set([...prev.gpus, ...t.gpus])].sort((a, b) => a - b) });
  }
  return [...by.values()];
}

/** Concrete tasks a name stands for: itself, or every replica of a declared (base) name. */
function expand(tasks: PlannedTask[], name: string): PlannedTask[] {
  const exact = tasks.filter((t) => t.name === name);
  return exact.length ? exact : tasks.filter((t) => t.base === name);
}

export function monitorSchedule(plan: PlanPart): MonitorSchedule {
  const warnings: string[] = [];
  const monitors: MonitorSpec[] = [];
  const covered: Array<{ m: MonitorSpec; targets: MonitorTarget[]; nodes: Map<string, CollectorSeed> }> = [];
  const backendOf = new Map(plan.backends.map((b) => [b.name, b]));
  const traits = traitsOf(plan);
  const monitorable = (t: PlannedTask) => traits(t.backend).monitor;
  const targetsOf = (t: PlannedTask, m?: MonitorSpec) => taskTargets(t, traits(t.backend).synthetic, m);

  const seedsFor = (ts: PlannedTask[]): Map<string, CollectorSeed> => {
    const out = new Map<string, CollectorSeed>();
    for (const t of ts)
      for (const n of t.nodes) seed(out, t.backend, t.backendType, traits(t.backend).synthetic, n);
    return out;
  };

  if (plan.workflowMonitor) {
    const m = normalizeMonitor(plan.workflowMonitor, null);
    monitors.push(m);
    const seeds = new Map<string, CollectorSeed>();
    let targets: MonitorTarget[];
    if (m.usedBy.length) {
      const ts = m.usedBy.flatMap((n) => expand(plan.tasks, n)).filter(monitorable);
      for (const [k, v] of seedsFor(ts)) seeds.set(k, v);
      targets = mergeTargets(ts.flatMap((t) => targetsOf(t)));
    } else {
      const used = new Set(plan.tasks.map((t) => t.backend));
      for (const b of plan.backends.filter((x) => used.has(x.name))) {
        if (!b.capabilities.monitor) {
          warnings.push(`workflow.monitor: backend '${b.name}' (${b.type}) is skipped: ${NOT_SAMPLED}`);
          continue;
        }
        for (const n of selectNodes(b.nodes, m.nodes))
          seed(seeds, b.name, b.type, b.capabilities.syntheticNodes, n);
      }
      const gpus: MonitorTarget['gpus'] = m.gpus?.indices
        ? m.gpus.indices
        : m.gpus?.count !== undefined
          ? range(m.gpus.count)
          : 'all';
      targets = [...seeds.keys()].map((host) => ({ host, gpus }));
    }
    covered.push({ m, targets, nodes: seeds });
  }
  for (const t of plan.tasks) {
    if (!t.monitor) continue;
    const m = normalizeMonitor(t.monitor, t.name);
    if (!monitorable(t)) {
      warnings.push(
        `task '${t.name}': monitor skipped on ${t.backendType} backend '${t.backend}': ${NOT_SAMPLED}`,
      );
      continue;
    }
    monitors.push(m);
    if (m.usedBy.length) {
      const ts = m.usedBy.flatMap((n) => expand(plan.tasks, n)).filter(monitorable);
      covered.push({ m, targets: mergeTargets(ts.flatMap((x) => targetsOf(x, m))), nodes: seedsFor(ts) });
    } else if (m.nodes) {
      const b = backendOf.get(t.backend);
      const seeds = new Map<string, CollectorSeed>();
      for (const n of selectNodes(b?.nodes ?? t.nodes, m.nodes))
        seed(seeds, t.backend, t.backendType, traits(t.backend).synthetic, n);
      const g = targetsOf(t, m)[0]?.gpus ?? 'none';
      covered.push({ m, targets: [...seeds.keys()].map((host) => ({ host, gpus: g })), nodes: seeds });
    } else covered.push({ m, targets: targetsOf(t, m), nodes: seedsFor([t]) });
  }
  return { monitors, collectors: collectors(covered), views: views(plan, covered, traits), warnings };
}

interface CollectorSeed {
  backend: string;
  type: BackendType;
  synthetic: boolean;
  node: PlannedNode;
}

function seed(
  out: Map<string, CollectorSeed>,
  backend: string,
  type: BackendType,
  synthetic: boolean,
  node: PlannedNode,
): void {
  const k = hostKey(synthetic, node);
  if (!out.has(k)) out.set(k, { backend, type, synthetic, node });
}

function collectors(covered: Array<{ m: MonitorSpec; nodes: Map<string, CollectorSeed> }>): CollectorPlan[] {
  const by = new Map<string, CollectorPlan>();
  for (const { m, nodes } of covered) {
    for (const [host, s] of nodes) {
      let c = by.get(host);
      if (!c) {
        c = {
          host,
          backend: s.backend,
          backendType: s.type,
          node: s.node,
          nodeId: s.synthetic ? 0 : s.node.index,
          scopes: {},
          tickMs: Infinity,
          gpuFields: ['index'],
          custom: [],
        };
        by.set(host, c);
      }
      for (const k of SCOPE_ORDER) {
        const iv = m.scopes[k];
        if (iv !== undefined) c.scopes[k] = Math.min(c.scopes[k] ?? Infinity, iv);
      }
      if (m.scopes.gpu !== undefined)
        for (const f of m.gpuFields) if (!c.gpuFields.includes(f)) c.gpuFields.push(f);
      for (const cmd of m.custom) if (!c.custom.includes(cmd)) c.custom.push(cmd);
    }
  }
  for (const c of by.values()) {
    const ivs = Object.values(c.scopes);
    c.tickMs = ivs.length ? Math.min(...ivs) : 5000;
  }
  return [...by.values()];
}

function views(
  plan: PlanPart,
  covered: Array<{ m: MonitorSpec; targets: MonitorTarget[] }>,
  traits: ReturnType<typeof traitsOf>,
): ReportView[] {
  const out = new Map<string, ReportView>();
  const add = (v: ReportView) => {
    const prev = out.get(v.path);
    if (!prev) out.set(v.path, v);
    else {
      prev.scopes = SCOPE_ORDER.filter((s) => prev.scopes.includes(s) || v.scopes.includes(s));
      prev.formats = [...new Set([...prev.formats, ...v.formats])];
    }
  };
  const scopesOf = (m: MonitorSpec) => SCOPE_ORDER.filter((s) => m.scopes[s] !== undefined);
  for (const { m, targets } of covered) {
    if (!m.report.enabled) continue;
    const base = { scopes: scopesOf(m), formats: [...m.report.formats], window: null };
    if (m.owner === null) {
      add({
        ...base,
        path: 'lifecycle/workflow/',
        group: 'lifecycle',
        note: 'whole-pool aggregate',
        windowTask: null,
        targets,
      });
      const hosts = new Set(targets.map((t) => t.host));
      for (const t of plan.tasks) {
        if (!traits(t.backend).monitor) continue;
        const tt = taskTargets(t, traits(t.backend).synthetic).filter((x) => hosts.has(x.host));
        if (tt.length)
          add({
            ...base,
            path: `lifecycle/${t.name}/`,
            group: 'lifecycle',
            note: 'task lifecycle window',
            windowTask: t.name,
            targets: tt,
          });
      }
      continue;
    }
    const owner = m.owner;
    const reports: Array<{ name: string; targets: MonitorTarget[]; note: string }> = m.usedBy.length
      ? m.usedBy.map((b) => ({
          name: `${b}__monitored_by__${owner}`,
          targets: mergeTargets(
            expand(plan.tasks, b).flatMap((x) => taskTargets(x, traits(x.backend).synthetic, m)),
          ),
          note: `${b}'s resources over ${owner}'s run window`,
        }))
      : [{ name: owner, targets, note: 'task lifecycle window' }];
    for (const r of reports) {
      add({
        ...base,
        path: `lifecycle/${r.name}/`,
        group: 'lifecycle',
        note: r.note,
        windowTask: owner,
        targets: r.targets,
      });
      if (m.window)
        add({
          ...base,
          path: `windowed/${r.name}/`,
          group: 'windowed',
          note: `log-marker window of ${owner}: start=${describeMarker(m.window.start, 'task start')}, end=${describeMarker(m.window.end, 'task end')}`,
          windowTask: owner,
          window: m.window,
          targets: r.targets,
        });
    }
  }
  return [...out.values()];
}
