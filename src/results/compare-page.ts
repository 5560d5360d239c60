/**
 * The compare page: one self-contained HTML file (the report's rules: no network, a
 * Content-Security-Policy that loads nothing, every value escaped). An SVG scatter of the first
 * two metrics — one point per configuration, the Pareto front drawn through its points, each point
 * a link to the report of its median run — and the table of configurations with the same links.
 * With one metric the configurations are laid out in order along x.
 */
import { dirname, relative } from 'node:path';
import { esc } from '../report/html.js';
import type { CompareReport, ComparePoint } from './compare.js';

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
const W = 720;
const H = 420;
const PAD = { l: 70, r: 20, t: 20, b: 50 };

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toPrecision(4));

function scale(values: number[], from: number, to: number): (v: number) => number {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const span = hi - lo;
  lo -= span * 0.05;
  hi += span * 0.05;
  return (v) => from + ((v - lo) / (hi - lo)) * (to - from);
}

function linkOf(p: ComparePoint, page: string): string {
  if (!p.report) return '';
  return relative(dirname(page), p.report).split('\\').join('/');
}

function ticks(values: number[], at: (v: number) => number, axis: 'x' | 'y'): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const marks = lo === hi ? [lo] : [0, 0.25, 0.5, 0.75, 1].map((f) => lo + f * (hi - lo));
  return marks
    .map((v) =>
      axis === 'x'
        ? `<text x="${at(v).toFixed(1)}" y="${H - PAD.b + 18}" text-anchor="middle">${esc(fmt(v))}</text>`
        : `<text x="${PAD.l - 6}" y="${(at(v) + 4).toFixed(1)}" text-anchor="end">${esc(fmt(v))}</text>`,
    )
    .join('');
}

function scatter(r: CompareReport, page: string): string {
  const two = r.metrics.length >= 2;
  const xs = r.points.map((p, i) => (two ? p.metrics[0] : i + 1));
  const ys = r.points.map((p) => (two ? p.metrics[1] : p.metrics[0]));
  const sx = scale(xs, PAD.l, W - PAD.r);
  const sy = scale(ys, H - PAD.b, PAD.t);
  const at = new Map(r.points.map((p, i) => [p, [sx(xs[i]), sy(ys[i])] as const]));
  const front = r.front.map((p) => at.get(p)!);
  front.sort((a, b) => a[0] - b[0]);
  const line =
    front.length > 1
      ? `<polyline class="front" points="${front.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}"/>`
      : '';
  const dots = r.points
    .map((p) => {
      const [x, y] = at.get(p)!;
      const link = linkOf(p, page);
      const tip = `${p.config}\n${r.metrics.map((m, i) => `${m.name} = ${fmt(p.metrics[i])}`).join('\n')}\n${p.n} run(s); ${p.run}`;
      const dot = `<circle class="pt${p.onFront ? ' on-front' : ''}${p === r.best ? ' best' : ''}" cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${p.onFront ? 7 : 5}"><title>${esc(tip)}</title></circle>`;
      return link
        ? `<a href="${esc(link)}" data-config="${esc(p.config)}">${dot}</a>`
        : `<g data-config="${esc(p.config)}">${dot}</g>`;
    })
    .join('');
  const xName = two ? `${r.metrics[0].name} (${r.metrics[0].direction})` : 'configuration';
  const yName = two
    ? `${r.metrics[1].name} (${r.metrics[1].direction})`
    : `${r.metrics[0].name} (${r.metrics[0].direction})`;
  return `<svg id="scatter" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(`${yName} against ${xName}`)}">
<rect x="${PAD.l}" y="${PAD.t}" width="${W - PAD.l - PAD.r}" height="${H - PAD.t - PAD.b}" class="plot"/>
${two ? ticks(xs, sx, 'x') : ''}${ticks(ys, sy, 'y')}
<text x="${(PAD.l + W - PAD.r) / 2}" y="${H - 8}" text-anchor="middle" class="axis">${esc(xName)}</text>
<text transform="translate(16 ${(PAD.t + H - PAD.b) / 2}) rotate(-90)" text-anchor="middle" class="axis">${esc(yName)}</text>
${line}${dots}</svg>`;
}

function table(r: CompareReport, page: string): string {
  const head = `<tr><th>configuration</th>${r.metrics.map((m) => `<th>${esc(m.name)} (${m.direction})</th>`).join('')}<th>runs</th><th>front</th><th>report</th></tr>`;
  const rows = r.points
    .map((p) => {
      const link = linkOf(p, page);
      return `<tr${p === r.best ? ' class="best"' : ''}><td>${esc(p.config)}</td>${p.metrics.map((v) => `<td class="num">${esc(fmt(v))}</td>`).join('')}<td class="num">${p.n}</td><td>${p.onFront ? '◆' : ''}</td><td>${link ? `<a href="${esc(link)}">${esc(p.run)}</a>` : esc(p.run)}</td></tr>`;
    })
    .join('');
  return `<table id="configs">${head}${rows}</table>`;
}

const CSS = `body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}
.plot{fill:#fafafa;stroke:#ccc}.pt{fill:#6b8fd6;stroke:#fff}.pt.on-front{fill:#d65f4a}.pt.best{stroke:#222;stroke-width:2}
.front{fill:none;stroke:#d65f4a;stroke-width:2;stroke-dasharray:4 3}svg text{font-size:12px;fill:#444}.axis{font-weight:600}
table{border-collapse:collapse;margin-top:16px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}.num{text-align:right}tr.best{background:#fff6d6}`;

/** The page, for writing at `page` (the links to the run reports are relative to it). */
export function renderComparePage(r: CompareReport, page: string): string {
  const best = r.best
    ? `<p id="best">Best by ${esc(r.metrics[0].name)} (${r.metrics[0].direction}): <b>${esc(r.best.config)}</b> = ${esc(fmt(r.best.metrics[0]))}</p>`
    : '<p>No configuration has every metric.</p>';
  const front =
    r.metrics.length >= 2
      ? `<p id="front">Pareto front of ${esc(r.metrics[0].name)} and ${esc(r.metrics[1].name)}: ${r.front.map((p) => esc(p.config)).join(' · ')}</p>`
      : '';
  const body = `<h1>sflow results: ${r.points.length} configuration(s)</h1><p>Variables that differ: ${esc(r.variables.join(', ') || '(none)')}. Each point is a configuration (the median of its runs); click one to open the report of its median run.</p>${best}${front}${r.points.length ? scatter(r, page) : ''}${table(r, page)}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}"><title>sflow results compare</title><style>${CSS}</style></head><body>${body}</body></html>\n`;
}
