/**
 * `sflow batch --bulk-input rows.csv [--row SEL] [--submit]` (artifacts-batch.md C8): one sbatch
 * job per CSV row, into `<output dir>/bulk_input_<YYYYmmdd-HHMMSS>/<row name>.{sh,yaml}` plus
 * `results.csv`. The CSV rules are compose's (config/bulk-csv.ts: a blank `sflow_config_file` is
 * an error); batch adds the node count: a `SLURM_NODES` / `NUM_SLURM_NODES` / `NUM_NODES` column,
 * or `--nodes` — and a `--nodes` that disagrees with a row's column is refused before anything is
 * written (the allocation would be one size and the plan another). A row that fails its dry-run
 * is reported and skipped; the others go on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import {
  CONFIG_COLUMN,
  readBulkCsv,
  rowFiles,
  rowNames,
  selectRows,
  type BulkRow,
} from '../config/bulk-csv.js';
import { SflowError } from '../util/sflow-error.js';
import { loadRecipe } from '../config/load.js';
import { batchScheduler } from '../backends/registry.js';
import { batchScript, composedPathFor } from './batch-script.js';
import {
  ensureLogDirs,
  recipeField,
  validateJob,
  validationFailure,
  writeJob,
  type BatchSetup,
} from './batch-job.js';
import { rowOverrides } from './compose-bulk.js';

export const NODE_COLUMNS = ['SLURM_NODES', 'NUM_SLURM_NODES', 'NUM_NODES'];
const warn = (s: string) => process.stderr.write(`⚠ ${s}\n`);
const names = (list: unknown) =>
  Array.isArray(list) ? list.map((x: { name?: unknown }) => String(x?.name)) : [];

export function stamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** the row's node count: the first node column (fixed order) that holds an integer */
function rowNodeCell(r: BulkRow): { column: string; nodes: number } | undefined {
  for (const c of NODE_COLUMNS) {
    const v = r.cells[c];
    if (v !== undefined && /^\d+$/.test(v.trim())) return { column: c, nodes: Number(v) };
  }
  return undefined;
}
const rowNodes = (r: BulkRow) => rowNodeCell(r)?.nodes;
/** `CSV column SLURM_NODES, row 3`: where a row's node count came from, when its CSV gives one */
const rowNodesFrom = (r: BulkRow): string | undefined => {
  const c = rowNodeCell(r);
  return c ? `CSV column ${c.column}, row ${r.index}` : undefined;
};

/** a command-line mistake (flags that contradict the CSV): exit 2 */
const usage = (code: string, message: string, hint?: string) =>
  new SflowError(code, message, { phase: 'usage', ...(hint ? { hint } : {}) });
/** a mistake in the CSV, located like one in a recipe: a configuration error, exit 1 */
const invalid = (code: string, message: string, hint?: string) =>
  new SflowError(code, message, { phase: 'load', ...(hint ? { hint } : {}) });

export async function batchBulk(
  positional: string[],
  opts: Record<string, unknown>,
  s: BatchSetup,
): Promise<number> {
  const cliFiles = [...positional, ...((opts.file as string[] | undefined) ?? [])].map((f) => resolve(f));
  const csv = readBulkCsv(String(opts.bulkInput));
  const chosen = (opts.row as string[] | undefined)?.length
    ? selectRows(opts.row as string[], csv.rows.length)
    : csv.rows.map((r) => r.index);
  const rows = csv.rows.filter((r) => chosen.includes(r.index));
  const allNames = rowNames(csv.rows);
  const label = new Map(csv.rows.map((r, i) => [r.index, allNames[i]]));

  const nodeColumns = NODE_COLUMNS.filter((c) => csv.columns.includes(c));
  if (s.nodes === undefined && !nodeColumns.length)
    throw invalid(
      'bulk.csv_no_nodes',
      `${csv.path}:1:1: the CSV has no node-count column and no --nodes was given`,
      `add a column ${NODE_COLUMNS.join(', ')} (nodes per row), or pass --nodes/-N`,
    );
  if (s.nodes !== undefined) {
    const clash = rows.filter((r) => rowNodes(r) !== undefined && rowNodes(r) !== s.nodes);
    if (clash.length)
      throw usage(
        'bulk.nodes_disagree',
        `--nodes ${s.nodes} disagrees with the CSV's node column in row(s) ${clash.map((r) => `${r.index} (${rowNodes(r)}, ${csv.path}:${r.line})`).join(', ')}`,
        '--nodes sizes the sbatch allocation while the row sizes the workflow: drop --nodes, or make the column agree',
      );
  }

  // what each row's recipe declares before overrides: every non-node column must name one of these
  const failures: string[] = [];
  const declared = new Map<number, { vars: Set<string>; artifacts: Set<string> }>();
  for (const r of rows) {
    try {
      const base = loadRecipe({
        files: rowFiles(cliFiles, r),
        missable: [...s.cliMissable, ...r.missable],
        allowMissableWithOneFile: true,
      });
      declared.set(r.index, {
        vars: new Set(names(base.doc.variables)),
        artifacts: new Set(names(base.doc.artifacts)),
      });
    } catch (e) {
      failures.push(`[${r.index}] SKIPPED (${csv.path}:${r.line}): ${validationFailure(e).split('\n')[0]}`);
    }
  }
  const known = (c: string) => [...declared.values()].some((d) => d.vars.has(c) || d.artifacts.has(c));
  const unknown = csv.columns.filter((c) => !NODE_COLUMNS.includes(c) && !known(c));
  if (unknown.length && declared.size)
    throw invalid(
      'bulk.csv_unknown_column',
      `${csv.path}:1:1: column(s) ${unknown.map((c) => `'${c}'`).join(', ')} name no variable or artifact of the rows' recipes`,
      `a column other than ${CONFIG_COLUMN}, job_name, missable_tasks and the node columns overrides a declared variable or artifact`,
    );

  const dir = join(s.common.outputDir, `bulk_input_${stamp()}`);
  const results: Array<Record<string, string>> = [];
  let generated = 0;
  let submitted = 0;
  for (const r of rows) {
    const name = label.get(r.index)!;
    const row: Record<string, string> = {
      [CONFIG_COLUMN]: r.files.join(' '),
      job_name: r.jobName ?? '',
      ...r.cells,
    };
    const record = (jobId: string, out: string) =>
      results.push({ ...row, slurm_job_id: jobId, sflow_output_dir: out, sflow_batch_dir: dir });
    const d = declared.get(r.index);
    if (!d) {
      record('FAILED', '');
      continue;
    }
    const { sets, artifacts } = rowOverrides(r, d, s.cliSets, s.cliArtifacts, (m) =>
      warn(`row ${r.index}: ${m}`),
    );
    const files = rowFiles(cliFiles, r);
    const missable = [...s.cliMissable, ...r.missable];
    const nodes = s.nodes ?? rowNodes(r);
    let job;
    try {
      job = validateJob(
        {
          files,
          sets,
          artifacts,
          missable,
          ...(nodes !== undefined ? { nodes } : {}),
          ...(s.nodes === undefined && rowNodesFrom(r) ? { nodesFrom: rowNodesFrom(r) } : {}),
          ...(s.gpusPerNode !== undefined ? { gpusPerNode: s.gpusPerNode } : {}),
          bulk: true,
        },
        s.common,
      );
    } catch (e) {
      failures.push(
        `[${r.index}] SKIPPED (${sets.join(' ') || 'no overrides'}): ${validationFailure(e).split('\n')[0]}`,
      );
      record('FAILED', '');
      continue;
    }
    for (const w of job.warnings) warn(`row ${r.index}: ${w}`);
    const path = join(dir, `${name}.sh`);
    const alloc = await s.alloc.forJob(job.backend, name).catch((e: unknown) => {
      failures.push(`[${r.index}] SKIPPED: ${validationFailure(e).split('\n')[0]}`);
      record('FAILED', '');
    });
    if (!alloc) continue;
    const input = {
      ...s.base,
      files,
      // the job runs the composed copy written beside its script, the row's overrides applied in it
      composed: composedPathFor(path),
      sets,
      artifacts,
      missable,
      nodes: job.nodes,
      nodesFrom: s.nodes !== undefined ? '-N/--nodes' : (rowNodesFrom(r) ?? recipeField(job, 'nodes')),
      alloc,
    };
    generated++;
    if (opts.dryRun) {
      process.stdout.write(`# ---- row ${r.index}: ${name}.sh ----\n${batchScript(input)}`);
      continue;
    }
    writeJob(path, batchScript(input), job, Boolean(opts.resolve));
    const outGlob = join(s.common.outputDir, '<job id>-*');
    let line = `  [${r.index}] ${name}: ${path}`;
    if (opts.submit) {
      ensureLogDirs(input);
      const sub = await batchScheduler().submit(path);
      if ('error' in sub) {
        failures.push(`[${r.index}] sbatch failed: ${sub.error}`);
        record('', '');
        line += ' — sbatch FAILED';
      } else {
        submitted++;
        record(sub.jobId, join(s.common.outputDir, `${sub.jobId}-*`));
        line += ` — Slurm job ${sub.jobId}`;
      }
    } else record('not submitted', `not submitted (${outGlob})`);
    process.stdout.write(`${line}\n`);
  }
  if (opts.dryRun) {
    process.stderr.write(
      `ℹ --dry-run: ${generated}/${rows.length} row(s) validated; nothing written, nothing submitted\n`,
    );
    for (const f of failures) process.stderr.write(`✗ ${f}\n`);
    return failures.length ? 1 : 0;
  }
  mkdirSync(dir, { recursive: true });
  const resultsPath = join(dir, 'results.csv');
  const columns = [
    CONFIG_COLUMN,
    'job_name',
    ...csv.columns,
    'slurm_job_id',
    'sflow_output_dir',
    'sflow_batch_dir',
  ];
  writeFileSync(resultsPath, stringify(results, { header: true, columns }));
  const filter = (opts.row as string[] | undefined)?.length ? ` (rows ${chosen.join(',')})` : '';
  process.stdout.write(
    `Generated ${generated}/${rows.length} job script(s)${filter}${failures.length ? `, ${failures.length} failed` : ''}${opts.submit ? `, ${submitted} submitted` : ''}\n  scripts: ${dir}\n  results: ${resultsPath}\n`,
  );
  for (const f of failures) process.stderr.write(`✗ ${f}\n`);
  if (!opts.submit && generated) process.stdout.write('ℹ add --submit to submit them with sbatch\n');
  return failures.length ? 1 : 0;
}
