/**
 * One page comparing several runs (`sflow report A B …`): a table of the runs, the results of
 * every task with results or replicas side by side (a `run` column first, sortable), and each
 * run's timeline and failures.
 */
import { relative, dirname } from 'node:path';
import { cellValue, chip, esc, stamp } from './html.js';
import { attemptEnd, statusCounts } from './model.js';
import { legendHtml, pageShell, type ReportInput } from './page.js';
import { failuresHtml, resultGroups, runDuration, type ResultGroup } from './tables.js';
import { timelineSvg } from './timeline-svg.js';

export interface CompareRun {
  input: ReportInput;
  /** the run directory, for links to its own report */
  dir: string;
}

function num(v: unknown): string {
  return typeof v === 'number' ? ` data-v="${v}"` : '';
}

function runsTable(runs: CompareRun[], outFile: string): string {
  const rows = runs.map(({ input: { model: m }, dir }) => {
    const attempts = m.tasks.reduce((s, t) => s + t.attempts.length, 0);
    const link = relative(dirname(outFile), `${dir}/report.html`).split('\\').join('/');
    return `<tr><td class="name"><a href="${esc(link)}">${esc(m.runId)}</a></td><td>${esc(m.workflow)}</td><td>${chip(m.status)}</td><td>${esc(stamp(m.startedAt))}</td><td data-v="${(m.endedAt - m.startedAt) / 1000}">${esc(runDuration(m))}</td><td data-v="${m.tasks.length}">${m.tasks.length}</td><td data-v="${attempts}">${attempts}</td><td>${statusCounts(
      m,
    )
      .map(([s, n]) => chip(s, `${n}`))
      .join(' ')}</td></tr>`;
  });
  return `<div class="scroll"><table class="sortable runs"><thead><tr><th>run</th><th>workflow</th><th>status</th><th>started</th><th>duration</th><th>tasks</th><th>attempts</th><th>by status</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function comparedResults(runs: CompareRun[]): string {
  const byBase = new Map<
    string,
    Array<{ run: string; g: ResultGroup; endOf: (name: string) => number | undefined }>
  >();
  for (const { input } of runs) {
    const m = input.model;
    for (const g of resultGroups(m)) {
      const list = byBase.get(g.base) ?? [];
      const endOf = (name: string) => {
        const t = m.tasks.find((x) => x.name === name);
        const a = t?.attempts[t.attempts.length - 1];
        return a?.started !== undefined ? Math.round(attemptEnd(a, m) - a.started) / 1000 : undefined;
      };
      list.push({ run: m.runId, g, endOf });
      byBase.set(g.base, list);
    }
  }
  if (byBase.size === 0) return '<p class="note">No run has tasks with results or replicas.</p>';
  const out: string[] = [];
  for (const [base, list] of byBase) {
    const sweep = [...new Set(list.flatMap((x) => x.g.sweepKeys))];
    const metrics = [...new Set(list.flatMap((x) => x.g.metricKeys))];
    const rows = list.reduce((n, x) => n + x.g.tasks.length, 0);
    out.push(`<h3>${esc(base)} <small>${rows} rows from ${list.length} runs</small></h3>`);
    out.push(`<div class="scroll"><table class="sortable results" data-base="${esc(base)}"><thead><tr>`);
    out.push(
      ['run', 'task', ...sweep, 'status', 'time (s)', ...metrics].map((h) => `<th>${esc(h)}</th>`).join(''),
    );
    out.push('</tr></thead><tbody>');
    for (const { run, g, endOf } of list) {
      for (const t of g.tasks) {
        const sw = sweep.map((k) => {
          const v = t.info?.replica?.sweep[k];
          const n = v !== undefined && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
          return `<td${num(n)}>${esc(cellValue(n))}</td>`;
        });
        const time = endOf(t.name);
        const ms = metrics.map(
          (k) => `<td${num(t.result?.values[k])}>${esc(cellValue(t.result?.values[k]))}</td>`,
        );
        out.push(
          `<tr data-task="${esc(t.name)}"><td class="name">${esc(run)}</td><td>${esc(t.name)}</td>${sw.join('')}<td>${chip(t.status)}</td><td${num(time)}>${esc(cellValue(time))}</td>${ms.join('')}</tr>`,
        );
      }
    }
    out.push('</tbody></table></div>');
  }
  return out.join('');
}

export function renderComparison(runs: CompareRun[], outFile: string): string {
  const sections = [
    `<section id="runs"><h2>Runs</h2>${runsTable(runs, outFile)}</section>`,
    `<section id="results"><h2>Results</h2>${comparedResults(runs)}</section>`,
  ];
  runs.forEach(({ input }, i) => {
    const m = input.model;
    const tl = timelineSvg(m);
    const failed = m.tasks.some((t) => t.status === 'FAILED') || m.errors.length > 0;
    sections.push(
      `<section id="run-${i}"><h2>${esc(m.runId)} ${chip(m.status)}</h2><details${i === 0 ? ' open' : ''}><summary>timeline (${tl.attempts} attempts)</summary>${legendHtml()}<div class="wide">${tl.svg}</div></details>${failed ? `<h3>Failures</h3>${failuresHtml(m, input.tails ?? new Map<string, string[]>())}` : ''}</section>`,
    );
  });
  const header = `<header><h1>sflow · ${runs.length} runs compared</h1><div class="meta">${esc(
    [...new Set(runs.map((r) => r.input.model.workflow))].join(', '),
  )}</div></header>`;
  const body = `${header}<main>${sections.join('')}</main><footer>Built by sflow from each run's events.jsonl. Self-contained: no network.</footer>`;
  return pageShell(`sflow · ${runs.length} runs compared`, body, []);
}
