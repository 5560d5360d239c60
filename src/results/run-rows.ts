/**
 * A run's files → its rows (one per task instance). Pure: the files come through `RunFiles`, so
 * a run folder on disk and a run archive fetched from S3 give the same rows. Read: the ledger
 * (`events.jsonl`; a torn line is skipped), `sflow_run.json` (variables), `sflow_recipe.yaml`
 * (its digest), `results.json` (values the ledger lacks) and the monitor's `summary.csv` files.
 */
import { createHash } from 'node:crypto';
import type { PlanBackendInfo, PlanTaskInfo, RunEvent } from '../events/events.js';
import { eventTime } from '../events/events.js';
import { columnName, MONITOR_PREFIX, RESULT_PREFIX, VAR_PREFIX, type Cell, type Row } from './row.js';

/** Read access to one run's files, by path relative to the run folder (`/` separated). */
export interface RunFiles {
  /** the folder (or `s3://…` archive) the run came from, as shown to the user */
  location: string;
  read(rel: string): string | undefined;
  /** relative paths of the files under `dir` (recursively) */
  list(dir: string): string[];
}

export class NotARunError extends Error {}

function parseLines(text: string): RunEvent[] {
  const out: RunEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as RunEvent);
    } catch {
      /* a torn last line from a killed driver */
    }
  }
  return out;
}

/** `"8"` → 8: variables are recorded as text; numbers compare and sort as numbers. */
export function cellOf(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim();
    if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number(t);
    return v;
  }
  return JSON.stringify(v);
}

interface TaskState {
  attempts: number;
  start?: number;
  end?: number;
  status?: string;
  values?: Record<string, unknown>;
}

function taskStates(events: RunEvent[]): Map<string, TaskState> {
  const by = new Map<string, TaskState>();
  const get = (t: string) => {
    let s = by.get(t);
    if (!s) by.set(t, (s = { attempts: 0 }));
    return s;
  };
  for (const e of events) {
    if (e.type === 'task_started') {
      const s = get(e.task);
      s.attempts = Math.max(s.attempts, e.attempt);
      s.start = eventTime(e);
      s.end = undefined;
    } else if (e.type === 'task_finished') {
      const s = get(e.task);
      s.attempts = Math.max(s.attempts, e.attempt);
      s.end = eventTime(e);
      s.status = e.status;
    } else if (e.type === 'task_reused') {
      const s = get(e.task);
      s.attempts = Math.max(s.attempts, e.attempt);
      s.status = e.status;
    } else if (e.type === 'task_ready') get(e.task).status ??= 'READY';
    else if (e.type === 'result_parsed') get(e.task).values = e.values;
  }
  return by;
}

function resultsJsonValues(text: string | undefined): Record<string, Record<string, unknown>> {
  if (!text) return {};
  try {
    const doc = JSON.parse(text) as { tasks?: Record<string, { values?: Record<string, unknown> }> };
    const out: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(doc.tasks ?? {})) if (v?.values) out[k] = v.values;
    return out;
  } catch {
    return {};
  }
}

/**
 * Monitor figures per task: its windowed report (window.json names the task) where there is one,
 * else its lifecycle report; avg and max of each metric of summary.csv.
 */
function monitorFigures(files: RunFiles): Map<string, Row> {
  const out = new Map<string, Row>();
  const windowed = new Map<string, string>();
  const lifecycle = new Map<string, string>();
  for (const rel of files.list('sflow_monitor')) {
    const m = /^sflow_monitor\/(lifecycle|windowed)\/(.+)\/summary\.csv$/.exec(rel);
    if (!m) continue;
    const dir = rel.slice(0, -'summary.csv'.length);
    if (m[1] === 'lifecycle') lifecycle.set(m[2], rel);
    else {
      let task = m[2];
      try {
        task = (JSON.parse(files.read(`${dir}window.json`) ?? '{}') as { task?: string }).task ?? task;
      } catch {
        /* no window record: the report's name */
      }
      windowed.set(task, rel);
    }
  }
  for (const [task, rel] of [...lifecycle, ...windowed]) {
    const row: Row = {};
    const lines = (files.read(rel) ?? '').split('\n').slice(1);
    for (const line of lines) {
      const f = line.split(',');
      if (f.length < 7) continue;
      const [type, metric] = f;
      const avg = Number(f[f.length - 2]);
      const max = Number(f[f.length - 1]);
      if (Number.isFinite(avg)) row[columnName(MONITOR_PREFIX, `${type}_${metric}_avg`)] = avg;
      if (Number.isFinite(max)) row[columnName(MONITOR_PREFIX, `${type}_${metric}_max`)] = max;
    }
    out.set(task, row);
  }
  return out;
}

/**
 * A ledger without the run's verdict: the archive `upload_all` makes is taken before the verdict
 * is written, so when every task reached an end the run's status follows from theirs (FAILED, else
 * CANCELLED, else COMPLETED); a task that never ended makes it UNFINISHED (a killed driver).
 */
function derivedStatus(tasks: PlanTaskInfo[], states: Map<string, TaskState>): string {
  const ends = tasks.map((t) => states.get(t.name)?.status);
  if (!ends.length || ends.some((s) => s !== 'COMPLETED' && s !== 'FAILED' && s !== 'CANCELLED'))
    return 'UNFINISHED';
  return ends.includes('FAILED') ? 'FAILED' : ends.includes('CANCELLED') ? 'CANCELLED' : 'COMPLETED';
}

interface RunRecordLite {
  run_id?: string;
  workflow?: string;
  variables?: Record<string, { value?: string }>;
}

export function runRows(files: RunFiles): Row[] {
  const ledger = files.read('events.jsonl');
  if (ledger === undefined) throw new NotARunError(`${files.location}: no events.jsonl (not an sflow run?)`);
  const events = parseLines(ledger);
  let record: RunRecordLite = {};
  try {
    record = JSON.parse(files.read('sflow_run.json') ?? '{}') as RunRecordLite;
  } catch {
    /* a run without its record: the ledger says the rest */
  }
  const recipe = files.read('sflow_recipe.yaml');
  const started = events.find((e) => e.type === 'run_started');
  const plan = events.find((e) => e.type === 'run_plan');
  const finished = [...events].reverse().find((e) => e.type === 'run_finished');
  const states = taskStates(events);
  const fromIndex = resultsJsonValues(files.read('results.json'));
  const monitor = monitorFigures(files);
  const backends = new Map<string, PlanBackendInfo>((plan?.backends ?? []).map((b) => [b.name, b]));
  const tasks: PlanTaskInfo[] =
    plan?.tasks ??
    (started?.tasks ?? []).map((name) => ({ name, base: name, backend: '', nodes: [], gpus: null }) as never);
  const vars: Row = {};
  for (const [k, v] of Object.entries(record.variables ?? {}))
    vars[columnName(VAR_PREFIX, k)] = cellOf(v?.value);
  const runFields: Row = {
    run_id: record.run_id ?? started?.runId ?? null,
    run_dir: files.location,
    workflow: record.workflow ?? started?.workflow ?? null,
    recipe_digest:
      recipe === undefined ? null : createHash('sha256').update(recipe).digest('hex').slice(0, 16),
    started_at: started ? new Date(started.t).toISOString() : null,
    run_status: finished?.status ?? (started ? derivedStatus(tasks, states) : null),
  };
  return tasks.map((t) => {
    const s = states.get(t.name);
    const row: Row = {
      ...runFields,
      backend: backends.get(t.backend)?.type ?? (t.backend || null),
      task: t.name,
      base_task: t.base,
      replica_index: t.replica?.index ?? null,
      nodes: t.nodes.length,
      node_names: t.nodes.join(','),
      gpus: t.gpus ? t.gpus.length * Math.max(1, t.nodes.length) : (t.enginePicksGpus ?? 0),
      status: s?.status ?? 'NOT_STARTED',
      attempts: s?.attempts ?? 0,
      duration_s: s?.start !== undefined && s.end !== undefined ? (s.end - s.start) / 1000 : null,
      ...vars,
    };
    for (const [k, v] of Object.entries(t.replica?.sweep ?? {})) row[columnName(VAR_PREFIX, k)] = cellOf(v);
    for (const [k, v] of Object.entries(s?.values ?? fromIndex[t.name] ?? {}))
      row[columnName(RESULT_PREFIX, k)] = cellOf(v);
    Object.assign(row, monitor.get(t.name) ?? {});
    return row;
  });
}
