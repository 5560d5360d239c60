/**
 * The self-contained HTML page of one run: header, failures, timeline, DAG, results, probe
 * traces, GPU assignment, charts (concurrency; monitor samples when `monitorCharts` found some).
 * A Content-Security-Policy of `default-src 'none'` makes sure the page never loads anything.
 */
import { PAGE_CSS, PAGE_JS, STATUS_COLORS, uplotAssets } from './assets.js';
import { dagSvg } from './dag-svg.js';
import { chip, esc, scriptJson, stamp } from './html.js';
import { statusCounts, type ReportModel } from './model.js';
import type { MonitorView } from './monitor.js';
import { eventMarkers } from './markers.js';
import type { PageChart } from './page-chart.js';
import { monitorSection } from './monitor-section.js';
import { failuresHtml, gpuHtml, probesHtml, resultsHtml, runDuration } from './tables.js';
import { concurrencySeries, timelineSvg } from './timeline-svg.js';
import { sessionsHtml } from './sessions.js';

export interface ReportInput {
  model: ReportModel;
  /** task → last lines of its log (failed tasks) */
  tails?: Map<string, string[]>;
  /** base task → metric → unit (from result.json metadata) */
  units?: Map<string, Record<string, string>>;
  monitor?: MonitorView[];
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

export function pageShell(title: string, body: string, charts: PageChart[]): string {
  return pageParts(title, [body], charts).join('');
}

/** The page as its pieces in order: written one by one, a large report is never one string. */
function pageParts(title: string, body: string[], charts: PageChart[]): string[] {
  const u = charts.length ? uplotAssets() : { js: '', css: '' };
  const useCharts = charts.length > 0 && u.js !== '';
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title><style>${useCharts ? u.css : ''}${PAGE_CSS}</style></head><body>`,
    ...body,
    useCharts ? `<script>${u.js}</script>` : '',
    useCharts ? `<script type="application/json" id="chart-data">${scriptJson(charts)}</script>` : '',
    `<script>${PAGE_JS}</script></body></html>\n`,
  ];
}

export function legendHtml(): string {
  return `<p class="legend">${Object.keys(STATUS_COLORS)
    .map((s) => chip(s))
    .join(
      '',
    )} <span class="note">◆ ready · ↻ retried · dashed: waiting to start · paler: starting up</span></p>`;
}

export function headerHtml(m: ReportModel, extra = ''): string {
  const counts = statusCounts(m)
    .map(([s, n]) => chip(s, `${n} ${s}`))
    .join('');
  const attempts = m.tasks.reduce((s, t) => s + t.attempts.length, 0);
  return `<header><h1>${esc(m.workflow || 'sflow run')} ${chip(m.status)}</h1><div class="meta">run <b>${esc(m.runId)}</b> · started ${esc(stamp(m.startedAt))} · ${esc(runDuration(m))}${m.exitCode !== undefined ? ` · exit code ${m.exitCode}` : ''} · ${m.tasks.length} tasks, ${attempts} attempts${m.warnings ? ` · ${m.warnings} warnings` : ''}${extra}</div><div class="meta">${esc(m.message || (m.finished ? '' : 'the run has not finished (or its driver was killed)'))}</div><div class="chips">${counts}</div></header>`;
}

export function renderReport(input: ReportInput): string {
  return renderReportParts(input).join('');
}

/**
 * The report as the page's pieces in order (a section each): `writeRunReport` writes them one by
 * one, so that a 10,000-task report (4.5 MB of text) is not also joined into one string and then
 * encoded whole (docs/scale.md, Local).
 */
export function renderReportParts(input: ReportInput): string[] {
  const m = input.model;
  const timeline = timelineSvg(m);
  const dag = dagSvg(m);
  const conc = concurrencySeries(m);
  const charts: PageChart[] = [];
  if (conc.x.length > 1) {
    charts.push({
      id: 'chart-concurrency',
      title: 'Tasks running and services ready',
      unit: 'tasks',
      stepped: true,
      x: conc.x,
      series: [
        { label: 'running', values: conc.running, color: STATUS_COLORS.RUNNING },
        { label: 'ready', values: conc.ready, color: STATUS_COLORS.READY },
      ],
    });
  }
  const span: [number, number] = [m.startedAt / 1000, m.endedAt / 1000];
  const hardware = input.monitor?.length ? monitorSection(input.monitor, eventMarkers(m), span) : undefined;
  charts.push(...(hardware?.charts ?? []));
  const failedCount = m.tasks.filter((t) => t.status === 'FAILED').length;
  const sections: Array<[string, string, string]> = [];
  if (failedCount || m.errors.length)
    sections.push([
      'failures',
      `Failures (${failedCount})`,
      failuresHtml(m, input.tails ?? new Map<string, string[]>()),
    ]);
  sections.push([
    'timeline',
    'Timeline',
    `${legendHtml()}<div class="wide">${timeline.svg}</div><p class="note">${timeline.attempts} attempt${timeline.attempts === 1 ? '' : 's'}; hover a bar for its times, exit code and reason.</p>`,
  ]);
  if (m.sessions.length > 1) sections.push(['sessions', `Sessions (${m.sessions.length})`, sessionsHtml(m)]);
  sections.push(['dag', 'DAG', `<div class="wide">${dag.html}</div>`]);
  sections.push(['results', 'Results', resultsHtml(m, input.units)]);
  if (!failedCount && !m.errors.length)
    sections.push(['failures', 'Failures', failuresHtml(m, input.tails ?? new Map<string, string[]>())]);
  sections.push(['probes', 'Probe traces', probesHtml(m)]);
  sections.push(['gpus', 'GPU assignment', gpuHtml(m)]);
  if (hardware) sections.push(['monitor', 'Hardware monitor', hardware.html]);
  const chartDivs = charts
    .filter((c) => !c.id.startsWith('chart-monitor-'))
    .map((c) => `<div class="chart" id="${c.id}"></div>`)
    .join('');
  sections.push([
    'charts',
    'Charts',
    chartDivs
      ? `${chartDivs}${hardware ? '' : '<p class="note">No monitor samples in this run (enable <code>monitor:</code> for GPU, CPU and network charts).</p>'}`
      : '<p class="note">Nothing ran.</p>',
  ]);
  const nav = `<nav>${sections.map(([id, title]) => `<a href="#${id}">${esc(title)}</a>`).join('')}</nav>`;
  const body = [
    headerHtml(m, m.sessions.length > 1 ? ` · ${m.sessions.length} sessions (resumed)` : ''),
    nav,
    '<main>',
    ...sections.flatMap(([id, title, html]) => [
      `<section id="${id}"><h2>${esc(title)}</h2>`,
      html,
      '</section>',
    ]),
    '</main>',
    `<footer>Built by sflow from ${esc(m.runDir || 'the run directory')}/events.jsonl${input.monitor?.length ? ' and the monitor samples' : ''}. Self-contained: no network.</footer>`,
  ];
  return pageParts(`sflow · ${m.workflow} · ${m.runId}`, body, charts);
}
