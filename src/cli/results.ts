/**
 * The actions of `sflow results …` (registered in results-commands.ts). Output paths and values
 * come from run folders: everything printed to the terminal is escaped.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { escapeControls } from '../util/ansi.js';
import { writeOutput } from '../outputs/write-output.js';
import { reportError } from './errors.js';
import type { Row } from '../results/row.js';
import type { Metric } from '../results/configs.js';

const DEFAULT_DIR = 'sflow_results';
const dirOf = (o: Record<string, unknown>) => (typeof o.dir === 'string' ? o.dir : DEFAULT_DIR);

export async function collectCommand(sources: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const { collect } = await import('../results/collect.js');
    const dir = dirOf(opts);
    const r = await collect(sources, { out: dir, progress: (l) => process.stderr.write(`… ${l}\n`) });
    for (const m of r.missing) process.stderr.write(`⚠ ${escapeControls(m)}: no such file or folder\n`);
    for (const s of r.skipped) process.stderr.write(`⚠ skipped ${escapeControls(s)}\n`);
    if (r.found === 0)
      throw new SflowError(
        'results.no_runs',
        `no sflow run found in ${sources.map(escapeControls).join(', ')}`,
        {
          phase: 'usage',
          hint: 'give run folders (they hold events.jsonl), an output root such as sflow_output/, or s3://bucket/prefix',
        },
      );
    const what = r.read ? `${r.read} new or changed run(s), ${r.rows} row(s)` : 'nothing new';
    process.stdout.write(
      `✓ ${what}; ${r.found} run(s) found; the table has ${r.total} row(s): ${resolve(dir)}/results.{parquet,csv,jsonl}\n`,
    );
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

export async function queryCommand(sql: string, opts: Record<string, unknown>): Promise<number> {
  try {
    const { runQuery } = await import('../results/query.js');
    const { formatResult } = await import('../results/format.js');
    const r = await runQuery(dirOf(opts), sql);
    process.stdout.write(formatResult(r, (opts.format as 'table' | 'csv' | 'json') ?? 'table'));
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

/** Rows of a collected table folder, or of run folders / roots / s3 prefixes read directly. */
async function loadRows(sources: string[], dir: string): Promise<Row[]> {
  const { readRows, STORE_FILES } = await import('../results/store.js');
  const { rowsFromSources } = await import('../results/collect.js');
  if (!sources.length) {
    if (!existsSync(join(dir, STORE_FILES.jsonl)))
      throw new SflowError('results.no_table', `${dir}: no collected table`, {
        phase: 'usage',
        hint: 'collect first (sflow results collect sflow_output/), or name run folders or roots',
      });
    return readRows(dir);
  }
  const out: Row[] = [];
  for (const s of sources) {
    if (!s.startsWith('s3://') && !existsSync(s))
      throw new SflowError('results.no_source', `${s}: no such file or folder`, { phase: 'usage' });
    out.push(
      ...(!s.startsWith('s3://') && existsSync(join(s, STORE_FILES.jsonl))
        ? readRows(s)
        : await rowsFromSources([s])),
    );
  }
  if (!out.length)
    throw new SflowError(
      'results.no_runs',
      `no sflow run found in ${sources.map(escapeControls).join(', ')}`,
      {
        phase: 'usage',
        hint: 'give run folders (they hold events.jsonl), an output root, a collected table folder or s3://bucket/prefix',
      },
    );
  return out;
}

async function metricsFor(specs: unknown, rows: Row[], fallback: 'all' | 'none'): Promise<Metric[]> {
  const { parseMetric, defaultMetrics, MetricError } = await import('../results/configs.js');
  const { columnsOf } = await import('../results/row.js');
  const list = Array.isArray(specs) ? (specs as string[]) : [];
  try {
    if (list.length) {
      const cols = columnsOf(rows);
      return list.map((s) => parseMetric(s, cols));
    }
  } catch (e) {
    if (e instanceof MetricError) throw new SflowError('results.metric', e.message, { phase: 'usage' });
    throw e;
  }
  const all = fallback === 'all' ? defaultMetrics(rows) : [];
  if (!all.length)
    throw new SflowError('results.no_metric', 'no metric to compare', {
      phase: 'usage',
      hint: 'name one with --metric NAME:max or NAME:min (a result field, or a column such as duration_s)',
    });
  return all;
}

const only = (rows: Row[], o: Record<string, unknown>) =>
  rows.filter(
    (r) =>
      (typeof o.workflow !== 'string' || r.workflow === o.workflow) &&
      (typeof o.task !== 'string' || r.base_task === o.task),
  );

export async function compareCommand(sources: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const rows = only(await loadRows(sources, dirOf(opts)), opts);
    const metrics = await metricsFor(opts.metric, rows, 'none');
    const { compareRows } = await import('../results/compare.js');
    const { compareText } = await import('../results/compare-text.js');
    const report = compareRows(rows, metrics);
    if (opts.format === 'json') process.stdout.write(JSON.stringify(report, null, 1) + '\n');
    else process.stdout.write(compareText(report));
    if (typeof opts.html === 'string') {
      const { renderComparePage } = await import('../results/compare-page.js');
      const file = writeOutput(opts.html, renderComparePage(report, resolve(opts.html)), { atomic: true });
      process.stdout.write(`✓ Saved to ${file}\n`);
    }
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

export async function diffCommand(
  base: string,
  candidate: string,
  opts: Record<string, unknown>,
): Promise<number> {
  try {
    const dir = dirOf(opts);
    const b = only(await loadRows([base], dir), opts);
    const c = only(await loadRows([candidate], dir), opts);
    const metrics = await metricsFor(opts.metric, [...b, ...c], 'all');
    const { diffRows, DIFF_DEFAULTS } = await import('../results/diff.js');
    const { diffText } = await import('../results/compare-text.js');
    const o = {
      k: typeof opts.spreadFactor === 'number' ? opts.spreadFactor : DIFF_DEFAULTS.k,
      minRel: typeof opts.minChange === 'number' ? opts.minChange / 100 : DIFF_DEFAULTS.minRel,
    };
    const report = diffRows(b, c, metrics, o);
    if (opts.format === 'json') process.stdout.write(JSON.stringify({ ...o, ...report }, null, 1) + '\n');
    else process.stdout.write(diffText(report, o, metrics));
    if (!report.lines.length)
      process.stderr.write('⚠ no configuration with values on both sides: nothing was compared\n');
    return report.regressions ? 1 : 0;
  } catch (e) {
    return reportError(e);
  }
}
