/**
 * The report's tables: results (one table per task with results or replicas: replica index and
 * sweep values as columns, then each parsed value; sortable), GPU assignment, probe traces and
 * failures (reason, failed assertions with the values they saw, the last lines of the log).
 */
import { attemptEnd, type ReportModel, type ReportTask } from './model.js';
import { cellValue, chip, clip, dur, esc, rel } from './html.js';

export interface ResultGroup {
  base: string;
  tasks: ReportTask[];
  sweepKeys: string[];
  metricKeys: string[];
  replicated: boolean;
}

/** Tasks grouped by their declared name; a group is shown when it has results or replicas. */
export function resultGroups(m: ReportModel): ResultGroup[] {
  const groups = new Map<string, ResultGroup>();
  for (const t of m.tasks) {
    const base = t.info?.base ?? t.name;
    let g = groups.get(base);
    if (!g) groups.set(base, (g = { base, tasks: [], sweepKeys: [], metricKeys: [], replicated: false }));
    g.tasks.push(t);
    if (t.info?.replica) g.replicated = true;
  }
  const out: ResultGroup[] = [];
  for (const g of groups.values()) {
    if (!g.replicated && !g.tasks.some((t) => t.result)) continue;
    const sweep = new Set<string>();
    const metrics = new Set<string>();
    for (const t of g.tasks) {
      for (const k of Object.keys(t.info?.replica?.sweep ?? {})) sweep.add(k);
      for (const k of Object.keys(t.result?.values ?? {})) metrics.add(k);
    }
    g.sweepKeys = [...sweep];
    g.metricKeys = [...metrics];
    out.push(g);
  }
  return out;
}

function td(v: unknown, cls = ''): string {
  const text = cellValue(v);
  const num = typeof v === 'number' ? ` data-v="${v}"` : '';
  return `<td${cls ? ` class="${cls}"` : ''}${num}>${esc(text)}</td>`;
}

function lastRun(t: ReportTask, m: ReportModel): number | undefined {
  const a = t.attempts[t.attempts.length - 1];
  if (!a || a.started === undefined) return undefined;
  return (attemptEnd(a, m) - a.started) / 1000;
}

/** `units`: base → metric → unit, from result.json metadata where known. */
export function resultsHtml(m: ReportModel, units: Map<string, Record<string, string>> = new Map()): string {
  const groups = resultGroups(m);
  if (groups.length === 0)
    return '<p class="note">No task declares <code>result:</code> and no task is replicated.</p>';
  const out: string[] = [];
  for (const g of groups) {
    const u = units.get(g.base) ?? {};
    const hasAsserts = g.tasks.some((t) => t.result?.assertions.length);
    out.push(
      `<h3>${esc(g.base)} <small>${g.tasks.length} task${g.tasks.length === 1 ? '' : 's'}</small></h3>`,
    );
    out.push(`<div class="scroll"><table class="sortable results" data-base="${esc(g.base)}"><thead><tr>`);
    const heads = [
      'task',
      ...(g.replicated ? ['replica'] : []),
      ...g.sweepKeys,
      'status',
      'attempts',
      'time (s)',
      ...g.metricKeys.map((k) => (u[k] ? `${k} (${u[k]})` : k)),
      ...(hasAsserts ? ['assertions'] : []),
    ];
    out.push(heads.map((h) => `<th title="sort">${esc(h)}</th>`).join(''));
    out.push('</tr></thead><tbody>');
    for (const t of g.tasks) {
      const r = t.result;
      const cells = [
        `<td class="name">${esc(t.name)}</td>`,
        ...(g.replicated ? [td(t.info?.replica?.index)] : []),
        ...g.sweepKeys.map((k) => {
          const v = t.info?.replica?.sweep[k];
          const n = v !== undefined && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
          return td(n);
        }),
        `<td>${chip(t.status)}</td>`,
        td(t.attempts.length),
        td(round(lastRun(t, m))),
        ...g.metricKeys.map((k) => td(r?.values[k], r && !r.ok ? 'warn' : '')),
        ...(hasAsserts ? [assertCell(t)] : []),
      ];
      out.push(`<tr data-task="${esc(t.name)}">${cells.join('')}</tr>`);
    }
    out.push('</tbody></table></div>');
  }
  return out.join('');
}

function round(v: number | undefined): number | undefined {
  return v === undefined ? undefined : Math.round(v * 1000) / 1000;
}

function assertCell(t: ReportTask): string {
  const list = t.result?.assertions ?? [];
  if (list.length === 0) return '<td></td>';
  const bad = list.filter((a) => !a.ok);
  const title = list.map((a) => `${a.ok ? '✓' : '✗'} ${a.expr}`).join('\n');
  return bad.length === 0
    ? `<td class="ok" title="${esc(title)}">✓ ${list.length}</td>`
    : `<td class="bad" title="${esc(title)}">✗ ${bad.length} of ${list.length}</td>`;
}

const MAX_GPU_ROWS = 5000;

export function gpuHtml(m: ReportModel): string {
  const rows = m.tasks.filter(
    (t) => (t.info?.gpus && t.info.gpus.length) || t.info?.enginePicksGpus || t.seenGpus,
  );
  if (rows.length === 0) return '<p class="note">No task requested GPUs.</p>';
  const out = [
    '<div class="scroll"><table class="sortable gpus"><thead><tr><th>task</th><th>backend</th><th>nodes</th><th>planned GPUs</th><th>CUDA_VISIBLE_DEVICES</th><th>GPU UUIDs</th><th>status</th></tr></thead><tbody>',
  ];
  for (const t of rows.slice(0, MAX_GPU_ROWS)) {
    out.push(
      `<tr><td class="name">${esc(t.name)}</td><td>${esc(t.info?.backend ?? '')}</td><td>${esc((t.info?.nodes ?? []).join(', '))}</td><td>${esc(t.info?.gpus?.length ? t.info.gpus.join(',') : t.info?.enginePicksGpus ? `${t.info.enginePicksGpus} per node (the cluster picks them)` : '')}</td><td>${esc(t.seenGpus ?? '')}</td><td class="mono">${esc((t.seenGpuUuids ?? []).map((u) => clip(u, 16)).join(' '))}</td><td>${chip(t.status)}</td></tr>`,
    );
  }
  out.push('</tbody></table></div>');
  if (rows.length > MAX_GPU_ROWS)
    out.push(`<p class="note">… ${rows.length - MAX_GPU_ROWS} more tasks with GPUs.</p>`);
  return out.join('');
}

const MAX_PROBES = 300;

export function probesHtml(m: ReportModel): string {
  if (m.probes.length === 0) return '<p class="note">No probes ran.</p>';
  const t0 = m.startedAt;
  const span = Math.max(1, m.endedAt - t0);
  const W = 260;
  const out = [
    '<div class="scroll"><table class="probes"><thead><tr><th>task</th><th>role</th><th>probe</th><th>checks (passed/total)</th><th>first pass</th><th>checks over the run</th><th>last result</th></tr></thead><tbody>',
  ];
  for (const p of m.probes.slice(0, MAX_PROBES)) {
    const marks = p.checks
      .map(
        (c) =>
          `<rect class="${c.ok ? 'ok' : 'ko'}" x="${(((c.t - t0) / span) * (W - 2)).toFixed(1)}" y="1" width="2" height="10"/>`,
      )
      .join('');
    out.push(
      `<tr><td class="name">${esc(p.task)}</td><td>${p.role}</td><td>${esc(p.target)}</td><td>${p.passed}/${p.total}</td><td>${p.firstPass ? rel(p.firstPass, t0) : '-'}</td><td><svg class="strip" width="${W}" height="12" viewBox="0 0 ${W} 12"><line x1="0" y1="6" x2="${W}" y2="6"/>${marks}</svg></td><td class="detail">${esc(clip(p.lastDetail, 160))}</td></tr>`,
    );
  }
  out.push('</tbody></table></div>');
  if (m.probes.length > MAX_PROBES)
    out.push(`<p class="note">… ${m.probes.length - MAX_PROBES} more probes.</p>`);
  return out.join('');
}

const MAX_FAILURES = 50;

/** `tails`: task → last lines of its log (read by the loader). */
export function failuresHtml(m: ReportModel, tails: Map<string, string[]>): string {
  const failed = m.tasks.filter((t) => t.status === 'FAILED');
  const cancelled = m.tasks.filter((t) => t.status === 'CANCELLED');
  const out: string[] = [];
  if (m.errors.length)
    out.push(`<div class="errors">${m.errors.map((e) => `<pre>${esc(e)}</pre>`).join('')}</div>`);
  if (failed.length === 0 && cancelled.length === 0 && m.errors.length === 0)
    return '<p class="note">No task failed.</p>';
  for (const t of failed.slice(0, MAX_FAILURES)) {
    const a = t.attempts[t.attempts.length - 1];
    const exit = t.exitCode !== null ? `exit ${t.exitCode}` : a?.signal ? `signal ${a.signal}` : '';
    out.push(`<div class="failure" data-task="${esc(t.name)}"><h3>${esc(t.name)} ${chip('FAILED')}</h3>`);
    out.push(
      `<p>${t.attempts.length} attempt${t.attempts.length === 1 ? '' : 's'}${exit ? ` · ${exit}` : ''}${t.reason ? ` · ${esc(t.reason)}` : ''}</p>`,
    );
    const r = t.result;
    const bad = r?.assertions.filter((x) => !x.ok) ?? [];
    if (bad.length) {
      out.push(
        '<table class="asserts"><thead><tr><th>assertion</th><th>values seen</th><th>why</th></tr></thead><tbody>',
      );
      for (const x of bad) {
        const seen = Object.entries(x.seen)
          .map(([k, v]) => `${k} = ${v}`)
          .join('\n');
        out.push(
          `<tr><td class="mono">${esc(x.expr)}</td><td class="mono pre">${esc(seen)}</td><td>${esc(x.error ?? 'false')}</td></tr>`,
        );
      }
      out.push('</tbody></table>');
      if (r?.resultPath) out.push(`<p class="note">result file: <code>${esc(r.resultPath)}</code></p>`);
    }
    if (r?.errors.length) out.push(`<p class="note">result parsing: ${esc(r.errors.join('; '))}</p>`);
    const tail = tails.get(t.name);
    if (tail && tail.length)
      out.push(
        `<p class="note">last ${tail.length === 1 ? 'line' : `${tail.length} lines`} of <code>${esc(t.info?.logPath ?? `${t.name}.log`)}</code></p><pre class="log">${esc(tail.join('\n'))}</pre>`,
      );
    else out.push('<p class="note">the log is empty or missing</p>');
    out.push('</div>');
  }
  if (failed.length > MAX_FAILURES)
    out.push(
      `<p class="note">… and ${failed.length - MAX_FAILURES} more failed tasks: ${esc(
        failed
          .slice(MAX_FAILURES)
          .map((t) => t.name)
          .join(', '),
      )}</p>`,
    );
  if (cancelled.length)
    out.push(
      `<p>${cancelled.length} task${cancelled.length === 1 ? '' : 's'} cancelled${m.failFast ? ` (${esc(m.failFast)})` : m.signals.length ? ` (signal ${esc(m.signals[0])})` : ''}: ${esc(clip(cancelled.map((t) => t.name).join(', '), 600))}</p>`,
    );
  return out.join('');
}

/** The duration of the run, for the header. */
export function runDuration(m: ReportModel): string {
  return dur(m.endedAt - m.startedAt);
}
