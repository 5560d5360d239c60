/**
 * `compare` and `diff` as text for a terminal: configurations, medians, the best one and the
 * Pareto front; each diff line with its change, its noise and its verdict, and each regression
 * named with the run folders on both sides. Values and paths come from run folders: escaped.
 */
import { escapeControls } from '../util/ansi.js';
import type { CompareReport } from './compare.js';
import type { Metric } from './configs.js';
import type { DiffOptions, DiffReport } from './diff.js';
import { asTable } from './format.js';

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const num = (x: number) => (Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000));

export function compareText(r: CompareReport): string {
  const heads = r.metrics.map((m) => `${m.name} (${m.direction}${m.guessed ? ', guessed' : ''})`);
  const table = asTable({
    columns: ['configuration', ...heads, 'runs', 'front'],
    rows: r.points.map((p) => [p.config, ...p.metrics, p.n, p.onFront ? '◆' : '']),
  });
  const out = [
    `variables that differ: ${r.variables.join(', ') || '(none: every row is one configuration per task)'}`,
    table.trimEnd(),
  ];
  if (r.best)
    out.push(
      `best by ${r.metrics[0].name} (${r.metrics[0].direction}): ${escapeControls(r.best.config)} = ${num(r.best.metrics[0])} (run ${escapeControls(r.best.run)})`,
    );
  if (r.metrics.length >= 2)
    out.push(
      `Pareto front of ${r.metrics[0].name} and ${r.metrics[1].name} (${r.front.length}): ${r.front.map((p) => escapeControls(p.config)).join(' | ')}`,
    );
  return out.join('\n') + '\n';
}

export function diffText(r: DiffReport, o: DiffOptions, metrics: Metric[]): string {
  const out = [
    `method: median of each side's runs; noise = sqrt(MAD_base² + MAD_candidate²) (MAD × 1.4826); a change counts beyond ${o.k} × noise and ≥ ${(o.minRel * 100).toFixed(1)}%`,
  ];
  const guessed = metrics.filter((m) => m.guessed);
  if (guessed.length)
    out.push(
      `directions guessed from the names (set them with --metric NAME:max|min): ${guessed.map((m) => `${m.column}:${m.direction}`).join(', ')}`,
    );
  out.push(
    asTable({
      columns: ['configuration', 'metric', 'base', 'candidate', 'change', 'noise', 'n', 'verdict'],
      rows: r.lines.map((l) => [
        l.config,
        `${l.metric} (${l.direction})`,
        l.base.median,
        l.candidate.median,
        pct(l.relative),
        `±${(l.noise * 100).toFixed(1)}%`,
        `${l.base.n}/${l.candidate.n}`,
        l.verdict,
      ]),
    }).trimEnd(),
  );
  if (r.onlyBase.length) out.push(`only in base: ${r.onlyBase.map(escapeControls).join(' | ')}`);
  if (r.onlyCandidate.length)
    out.push(`only in candidate: ${r.onlyCandidate.map(escapeControls).join(' | ')}`);
  for (const l of r.lines.filter((x) => x.verdict === 'regression'))
    out.push(
      `✗ regression: ${escapeControls(l.config)} ${l.metric} ${pct(l.relative)} (noise ±${(l.noise * 100).toFixed(1)}%): ${num(l.base.median)} → ${num(l.candidate.median)}\n    base run:      ${escapeControls(l.base.run)}${l.base.runs.length > 1 ? ` (median of ${l.base.runs.length} runs)` : ''}\n    candidate run: ${escapeControls(l.candidate.run)}${l.candidate.runs.length > 1 ? ` (median of ${l.candidate.runs.length} runs)` : ''}`,
    );
  out.push(
    r.regressions ? `✗ ${r.regressions} regression(s)` : `✓ no regression (${r.lines.length} comparisons)`,
  );
  return out.join('\n') + '\n';
}
