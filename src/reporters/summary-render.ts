/**
 * Renders `sflow_summary.log` (runtime.md 8.6) from a SummaryModel. Section titles are
 * underlined with `=` (top) or `-`; the local backend still gets the GPU/topology headers
 * with "n/a" so tools can parse the file.
 */
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { folderName } from '../plan/folder-name.js';
import { describeGpuAudits, readGpuAudits } from './gpu-audit.js';
import type { SummaryModel, TaskRow } from './summary-model.js';
import { clock, elapsed, isoLocal, seconds, table } from './format.js';
import { bytesText } from './upload-lines.js';
import { skewLine } from './engine-clock.js';

const BAR = 30;
const MAX_HINTS = 50;

function section(title: string, ch = '-'): string[] {
  return ['', title, ch.repeat(title.length)];
}

function taskEnd(r: TaskRow, m: SummaryModel, now: number): number | undefined {
  if (r.status === 'READY') return r.stoppedAt ?? m.endedAt ?? now;
  return r.endedAt ?? (r.lastStart !== undefined ? now : undefined);
}

function durationOf(r: TaskRow, m: SummaryModel, now: number): string {
  const end = taskEnd(r, m, now);
  return r.firstStart !== undefined && end !== undefined ? seconds(end - r.firstStart) : '-';
}

import type { PlanTaskInfo, RuntimeInfo } from '../events/events.js';
export type { RuntimeInfo };

/** What every section of the summary reads. */
interface SummaryView {
  m: SummaryModel;
  opts: { summaryPath: string; runtime?: RuntimeInfo; now?: number };
  now: number;
  /** the run's end, or now while it runs */
  end: number;
  rows: TaskRow[];
}

export function renderSummary(
  m: SummaryModel,
  opts: { summaryPath: string; runtime?: RuntimeInfo; now?: number },
): string {
  const now = opts.now ?? Date.now();
  const v: SummaryView = { m, opts, now, end: m.endedAt ?? now, rows: [...m.tasks.values()] };
  const out: string[] = [
    ...headerSection(v),
    ...runtimeSection(v),
    ...engineClocksSection(v),
    ...tasksSection(v),
    ...durationChartSection(v),
    ...timelineSection(v),
    ...probeTracesSection(v),
    ...gpuAssignmentSection(v),
    ...taskFoldersSection(v),
    ...topologySection(v),
    ...(m.uploads.size > 0 ? [...section('Uploads'), ...renderUploads(m)] : []),
    ...section('External Command Health'),
    ...renderExternal(m),
    ...commandLogsSection(v),
    ...dependenciesSection(v),
    ...failureHintsSection(v),
  ];
  return out.join('\n') + '\n';
}

/** The title block: workflow, status, times, counts per status, the sessions of a resumed run. */
function headerSection({ m, opts, end, rows }: SummaryView): string[] {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [
    'Sflow Summary',
    '=============',
    ...table(
      [
        ['Workflow', ':', m.workflow],
        ['Status', ':', m.status],
        ['Started', ':', isoLocal(m.startedAt)],
        ['Ended', ':', m.endedAt !== undefined ? isoLocal(m.endedAt) : '(running)'],
        ['Duration', ':', seconds(end - m.startedAt)],
        ['Output', ':', m.runDir],
        ['Tasks', ':', String(rows.length)],
        ['Summary', ':', opts.summaryPath],
        [
          'Counts',
          ':',
          [...counts]
            .sort()
            .map(([s, n]) => `${s}=${n}`)
            .join(' ') || '-',
        ],
        ...(m.message ? [['Message', ':', m.message]] : []),
        ...(m.sessions.length > 1
          ? [
              [
                'Sessions',
                ':',
                m.sessions
                  .map((x) =>
                    x.reused === undefined
                      ? `${x.n}: ${isoLocal(x.startedAt)}`
                      : `${x.n}: ${isoLocal(x.startedAt)} (resumed: ${x.reused} reused, ${x.rerun ?? 0} run)`,
                  )
                  .join('; '),
              ],
            ]
          : []),
      ],
      ' ',
    ),
  ];
}

function runtimeSection({ opts }: SummaryView): string[] {
  if (!opts.runtime) return [];
  return [
    ...section('Runtime'),
    ...table(
      [
        ['version', ':', opts.runtime.version],
        ['node', ':', opts.runtime.node],
        ['bin', ':', opts.runtime.bin],
        ['package', ':', opts.runtime.packageDir],
      ],
      ' ',
    ),
  ];
}

function engineClocksSection({ m }: SummaryView): string[] {
  const skewed = m.clocks.skewed();
  if (!skewed.length) return [];
  return [...section('Engine Clocks'), ...skewed.map((b) => `⚠ ${skewLine(b)}`)];
}

function tasksSection({ m, now, rows }: SummaryView): string[] {
  return [
    ...section('Tasks'),
    ...table([
      ['TASK', 'STATUS', 'ATTEMPTS', 'DURATION', 'EXIT', 'REASON'],
      ...rows.map((r) => [
        r.name,
        r.status,
        String(r.attempts),
        durationOf(r, m, now),
        r.exitCode !== null ? String(r.exitCode) : (r.signal ?? '-'),
        (r.reason ?? '').split('\n')[0],
      ]),
    ]),
  ];
}

/** One bar per task over the run's span. */
function durationChartSection({ m, now, end, rows }: SummaryView): string[] {
  const span = Math.max(1, end - m.startedAt);
  return [
    ...section('Task Duration Chart'),
    ...table(
      rows.map((r) => {
        const stop = taskEnd(r, m, now);
        let bar = '.'.repeat(BAR);
        if (r.firstStart !== undefined && stop !== undefined) {
          const a = Math.min(BAR - 1, Math.floor(((r.firstStart - m.startedAt) / span) * BAR));
          const b = Math.max(a + 1, Math.min(BAR, Math.ceil(((stop - m.startedAt) / span) * BAR)));
          bar = '.'.repeat(a) + '#'.repeat(b - a) + '.'.repeat(BAR - b);
        }
        return [r.name, `|${bar}|`, durationOf(r, m, now), r.status];
      }),
    ),
  ];
}

function timelineSection({ m }: SummaryView): string[] {
  return [
    ...section('Timeline'),
    ...table([
      ['Time', 'Elapsed', 'Task', 'Event', 'Summary'],
      ...m.timeline.map((e) => [clock(e.t), elapsed(e.t - m.startedAt), e.task, e.event, e.summary]),
    ]),
  ];
}

/** Each planned probe with its last attempt's state (none: no section). */
function probeTracesSection({ m }: SummaryView): string[] {
  if (!(m.probes.size > 0 || m.plan.some((t) => t.probes.length > 0))) return [];
  const prow: string[][] = [['TASK', 'PHASE', 'KIND', 'STATE', 'RUNTIME', 'DETAIL']];
  for (const t of m.plan) {
    const seen = m.probes.get(t.name);
    for (const p of t.probes) {
      const tr = seen?.get(`${p.role}/${p.target}`) ?? seen?.get(`${p.role}/${p.kind}`);
      const state = tr ? (tr.limit ? '[LIMIT]' : tr.ok ? '[OK]' : '[FAIL]') : '[-]';
      const runtime = tr
        ? `${seconds(tr.t - tr.since)} (${tr.checks} check${tr.checks === 1 ? '' : 's'})`
        : '-';
      prow.push([
        t.name,
        p.role,
        p.kind,
        state,
        runtime,
        tr ? `${p.target}: ${tr.detail}` : `${p.target}: not checked`,
      ]);
    }
  }
  return [...section('Probe Traces (last attempt)'), ...table(prow)];
}

/** Planned GPUs against what each task saw (the in-step audits, the started event, the plan). */
function gpuAssignmentSection({ m }: SummaryView): string[] {
  const head = section('GPU Assignment');
  const gpuTasks = m.plan.filter((t) => (t.gpus && t.gpus.length > 0) || t.enginePicksGpus);
  if (gpuTasks.length === 0) return [...head, 'n/a (no task requested GPUs)'];
  return [
    ...head,
    ...table([
      ['TASK', 'NODES', 'PLANNED GPUS', 'SEEN BY THE TASK'],
      ...gpuTasks.map((t) => {
        const row = m.tasks.get(t.name);
        if (!t.gpus?.length) return enginePicked(t, row);
        return [
          t.name,
          t.nodes.join(',') || '-',
          `CUDA_VISIBLE_DEVICES=${(t.gpus ?? []).join(',')}`,
          seenGpus(t, row),
        ];
      }),
    ]),
  ];
}

/** What a task with planned GPUs saw. */
function seenGpus(t: PlanTaskInfo, row: TaskRow | undefined): string {
  // Slurm steps: what the in-step selection exported on each node (sflow_gpus*.log)
  const audits = readGpuAudits(dirname(t.logPath));
  if (audits.length) return describeGpuAudits(audits);
  if (row?.seenGpus)
    return (
      `CUDA_VISIBLE_DEVICES=${row.seenGpus}${row.seenGpuUuids?.length ? ` (${row.seenGpuUuids.join(',')})` : ''}` +
      (row.seenGpus !== (t.gpus ?? []).join(',') ? ' [re-assigned by the GPU reservation registry]' : '')
    );
  return row?.firstStart !== undefined
    ? `CUDA_VISIBLE_DEVICES=${(t.gpus ?? []).join(',')} (as planned; no physical GPUs reserved)`
    : 'not started';
}

/** Names that could not be folder names as they are (plan/folder-name.ts). */
function taskFoldersSection({ m }: SummaryView): string[] {
  const renamed = m.plan.filter((t) => folderName(t.name) !== t.name);
  if (renamed.length === 0) return [];
  return [
    ...section('Task Folders (names changed to be safe folder names)'),
    ...table([['TASK', 'FOLDER'], ...renamed.map((t) => [JSON.stringify(t.name), basename(t.outputDir)])]),
  ];
}

function topologySection({ m }: SummaryView): string[] {
  const out = section('Node Topology');
  const remote = m.backends.filter((b) => !b.synthetic);
  if (remote.length === 0) out.push('n/a (local backend: synthetic nodes, no topology probe)');
  for (const b of remote) {
    out.push(
      `${b.name} (${b.type}): ` +
        b.nodes.map((n) => `${n.name}/${n.ip}${n.numGpus !== null ? ` gpus=${n.numGpus}` : ''}`).join(', '),
    );
    // GPU index → UUID per node, from the backend's topology probe
    for (const n of b.nodes)
      if (n.gpuUuids?.length) out.push(`  ${n.name}: ${n.gpuUuids.map((u, i) => `${i}=${u}`).join(' ')}`);
  }
  return out;
}

function commandLogsSection({ m }: SummaryView): string[] {
  const out = section('Command Logs');
  if (m.commandLogs.length === 0) out.push('n/a');
  // a family's log is written when its first task starts: only files that exist are named
  for (const c of m.commandLogs)
    out.push(
      existsSync(c.path)
        ? `${c.family}: ${c.path}`
        : `${c.family}: not written (no ${c.family} task started)`,
    );
  return out;
}

function dependenciesSection({ m }: SummaryView): string[] {
  return [
    ...section('Dependencies'),
    ...m.plan.map((t) => `${t.dependsOn.length ? [...t.dependsOn].sort().join(', ') : 'START'} -> ${t.name}`),
  ];
}

/** Failed, then cancelled tasks (up to MAX_HINTS): why, and the log to read. */
function failureHintsSection({ m, rows }: SummaryView): string[] {
  const bad = rows.filter((r) => r.status === 'FAILED' || r.status === 'CANCELLED');
  if (bad.length === 0) return [];
  const out = section('Failure Hints');
  const logs = new Map(m.plan.map((t) => [t.name, t.logPath]));
  const ordered = [
    ...bad.filter((r) => r.status === 'FAILED'),
    ...bad.filter((r) => r.status === 'CANCELLED'),
  ];
  for (const r of ordered.slice(0, MAX_HINTS)) {
    out.push(`${r.name}: ${r.status} after ${r.attempts} attempt(s)${r.reason ? ` - ${r.reason}` : ''}`);
    // a task that never started has an empty log: nothing to read there
    if (r.firstStart !== undefined) out.push(`  log: ${logs.get(r.name) ?? '-'}`);
  }
  if (ordered.length > MAX_HINTS) out.push(`… and ${ordered.length - MAX_HINTS} more`);
  return out;
}

/** a GPU task where the engine picks the devices (Kubernetes): how many it asked for, where it ran */
function enginePicked(t: PlanTaskInfo, row: TaskRow | undefined): string[] {
  const n = t.enginePicksGpus ?? 0;
  const nodes = t.nodes.join(',') || '-';
  const seen = row?.seenGpus
    ? `CUDA_VISIBLE_DEVICES=${row.seenGpus}`
    : row?.firstStart !== undefined
      ? `${n} GPU(s) per node on ${nodes}, the devices chosen by the cluster (device plugin or DRA)`
      : 'not started';
  return [t.name, nodes, `${n} per node (the cluster picks the devices)`, seen];
}

/**
 * One row per tool, then the verdict: OK, or DEGRADED naming each failed call (up to 10). Only
 * failures that changed or risked the run count; expected answers (a container already removed, a
 * 404 after a delete) are ok and only counted here.
 */
function renderExternal(m: SummaryModel): string[] {
  if (m.external.length === 0) return ['Verdict: OK (no external commands)'];
  const by = new Map<string, typeof m.external>();
  for (const r of m.external) {
    const list = by.get(r.tool);
    if (list) list.push(r);
    else by.set(r.tool, [r]);
  }
  const rows: string[][] = [['TOOL', 'CALLS', 'FAILED', 'TIMEOUTS', 'MEAN', 'MAX', 'VERDICT']];
  for (const [tool, list] of [...by].sort(([a], [b]) => a.localeCompare(b))) {
    const failed = list.filter((r) => !r.ok).length;
    const timeouts = list.filter((r) => r.timedOut).length;
    const total = list.reduce((a, r) => a + r.durationMs, 0);
    const max = Math.max(...list.map((r) => r.durationMs));
    rows.push([
      tool,
      String(list.length),
      String(failed),
      String(timeouts),
      seconds(total / list.length),
      seconds(max),
      failed || timeouts ? 'DEGRADED' : 'healthy',
    ]);
  }
  const failed = m.external.filter((r) => !r.ok || r.timedOut);
  const expected = m.external.filter((r) => r.expected).length;
  const answers = expected
    ? `; ${expected} expected answer(s) (e.g. already removed) not counted as failures`
    : '';
  const verdict = failed.length
    ? [
        `Verdict: DEGRADED: ${failed.length} of ${m.external.length} call(s) failed${answers}`,
        ...failed.slice(0, 10).map((r) => `  ${r.failure ?? `${r.tool} timed out`}`),
        ...(failed.length > 10
          ? [`  … and ${failed.length - 10} more (command_trace.jsonl has them all)`]
          : []),
      ]
    : [`Verdict: OK: ${m.external.length} call(s), none failed${answers}`];
  return [...table(rows), ...verdict];
}

function renderUploads(m: SummaryModel): string[] {
  const rows = [...m.uploads.values()];
  const ok = rows.filter((r) => r.status === 'OK');
  const bytes = ok.reduce((a, r) => a + (r.bytes ?? 0), 0);
  const out = [
    `${ok.length}/${rows.length} object(s) uploaded, ${bytesText(bytes)}; ${rows.length - ok.length} failed or unfinished`,
    ...table([
      ['TASK', 'STATUS', 'SIZE', 'ATTEMPTS', 'TIME', 'DESTINATION'],
      ...rows.map((r) => [
        r.task,
        r.status,
        r.bytes !== undefined ? bytesText(r.bytes) : '-',
        String(r.attempts),
        r.durationMs !== undefined ? seconds(r.durationMs) : '-',
        r.dest || r.target,
      ]),
    ]),
  ];
  for (const r of rows.filter((x) => x.status === 'FAILED'))
    out.push(`${r.task}: ${r.from} → ${r.dest || r.target}: ${r.error ?? 'failed'} (on_error: ${r.onError})`);
  return out;
}
