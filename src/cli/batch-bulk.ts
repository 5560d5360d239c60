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
  type BulkCsv,
  type BulkRow,
} from '../config/bulk-csv.js';
import { SflowError } from '../util/sflow-error.js';
import { loadRecipe } from '../config/load.js';
import { batchScheduler } from '../backends/registry.js';
import { batchScript, composedPathFor, type BatchScriptInput } from './batch-script.js';
import {
  ensureLogDirs,
  recipeField,
  validateJob,
  validationFailure,
  writeJob,
  type BatchSetup,
  type PreparedJob,
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

/** What a recipe of a row declares before overrides: every non-node column must name one. */
type Declared = { vars: Set<string>; artifacts: Set<string> };

/** What the loop over the rows gathers. */
interface BulkInputRun {
  csv: BulkCsv;
  cliFiles: string[];
  dir: string;
  results: Array<Record<string, string>>;
  failures: string[];
  generated: number;
  submitted: number;
}

export async function batchBulk(
  positional: string[],
  opts: Record<string, unknown>,
  s: BatchSetup,
): Promise<number> {
  const csv = readBulkCsv(String(opts.bulkInput));
  const chosen = (opts.row as string[] | undefined)?.length
    ? selectRows(opts.row as string[], csv.rows.length)
    : csv.rows.map((r) => r.index);
  const rows = csv.rows.filter((r) => chosen.includes(r.index));
  const allNames = rowNames(csv.rows);
  const label = new Map(csv.rows.map((r, i) => [r.index, allNames[i]]));
  refuseNodeMismatch(csv, rows, s);
  const run: BulkInputRun = {
    csv,
    cliFiles: [...positional, ...((opts.file as string[] | undefined) ?? [])].map((f) => resolve(f)),
    dir: join(s.common.outputDir, `bulk_input_${stamp()}`),
    results: [],
    failures: [],
    generated: 0,
    submitted: 0,
  };
  const declared = declaredByRow(run, rows, s);
  for (const r of rows) {
    const name = label.get(r.index)!;
    const row: Record<string, string> = {
      [CONFIG_COLUMN]: r.files.join(' '),
      job_name: r.jobName ?? '',
      ...r.cells,
    };
    const record = (jobId: string, out: string) =>
      run.results.push({ ...row, slurm_job_id: jobId, sflow_output_dir: out, sflow_batch_dir: run.dir });
    const d = declared.get(r.index);
    const job = d && (await prepareRowJob(run, r, d, name, s));
    if (!job) {
      record('FAILED', '');
      continue;
    }
    run.generated++;
    await emitRowJob(run, r, name, job, opts, s, record);
  }
  if (opts.dryRun) {
    process.stderr.write(
      `ℹ --dry-run: ${run.generated}/${rows.length} row(s) validated; nothing written, nothing submitted\n`,
    );
    for (const f of run.failures) process.stderr.write(`✗ ${f}\n`);
    return run.failures.length ? 1 : 0;
  }
  const filter = (opts.row as string[] | undefined)?.length ? ` (rows ${chosen.join(',')})` : '';
  writeRowResults(run, rows.length, filter, Boolean(opts.submit));
  return run.failures.length ? 1 : 0;
}

/** A node count is needed (a CSV column or --nodes), and --nodes must agree with the column. */
function refuseNodeMismatch(csv: BulkCsv, rows: BulkRow[], s: BatchSetup): void {
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
}

/**
 * What each row's recipe declares before overrides (a recipe that does not load: the row is
 * skipped); a column that names nothing any of them declares is refused.
 */
function declaredByRow(run: BulkInputRun, rows: BulkRow[], s: BatchSetup): Map<number, Declared> {
  const { csv } = run;
  const declared = new Map<number, Declared>();
  for (const r of rows) {
    try {
      const base = loadRecipe({
        files: rowFiles(run.cliFiles, r),
        missable: [...s.cliMissable, ...r.missable],
        allowMissableWithOneFile: true,
      });
      declared.set(r.index, {
        vars: new Set(names(base.doc.variables)),
        artifacts: new Set(names(base.doc.artifacts)),
      });
    } catch (e) {
      run.failures.push(
        `[${r.index}] SKIPPED (${csv.path}:${r.line}): ${validationFailure(e).split('\n')[0]}`,
      );
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
  return declared;
}

/** The row's job: its overrides, its own dry-run and its allocation settings (a failure: skipped). */
async function prepareRowJob(
  run: BulkInputRun,
  r: BulkRow,
  d: Declared,
  name: string,
  s: BatchSetup,
): Promise<PreparedJob | undefined> {
  const { sets, artifacts } = rowOverrides(r, d, s.cliSets, s.cliArtifacts, (m) =>
    warn(`row ${r.index}: ${m}`),
  );
  const files = rowFiles(run.cliFiles, r);
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
    run.failures.push(
      `[${r.index}] SKIPPED (${sets.join(' ') || 'no overrides'}): ${validationFailure(e).split('\n')[0]}`,
    );
    return undefined;
  }
  for (const w of job.warnings) warn(`row ${r.index}: ${w}`);
  const path = join(run.dir, `${name}.sh`);
  const alloc = await s.alloc.forJob(job.backend, name).catch((e: unknown) => {
    run.failures.push(`[${r.index}] SKIPPED: ${validationFailure(e).split('\n')[0]}`);
  });
  if (!alloc) return undefined;
  const input: BatchScriptInput = {
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
  return { job, input };
}

/** Prints the row's script (`--dry-run`), or writes it and, with `--submit`, submits it. */
async function emitRowJob(
  run: BulkInputRun,
  r: BulkRow,
  name: string,
  { job, input }: PreparedJob,
  opts: Record<string, unknown>,
  s: BatchSetup,
  record: (jobId: string, out: string) => void,
): Promise<void> {
  if (opts.dryRun) {
    process.stdout.write(`# ---- row ${r.index}: ${name}.sh ----\n${batchScript(input)}`);
    return;
  }
  const path = join(run.dir, `${name}.sh`);
  writeJob(path, batchScript(input), job, Boolean(opts.resolve));
  const outGlob = join(s.common.outputDir, '<job id>-*');
  let line = `  [${r.index}] ${name}: ${path}`;
  if (opts.submit) {
    ensureLogDirs(input);
    const sub = await batchScheduler().submit(path);
    if ('error' in sub) {
      run.failures.push(`[${r.index}] sbatch failed: ${sub.error}`);
      record('', '');
      line += ' — sbatch FAILED';
    } else {
      run.submitted++;
      record(sub.jobId, join(s.common.outputDir, `${sub.jobId}-*`));
      line += ` — Slurm job ${sub.jobId}`;
    }
  } else record('not submitted', `not submitted (${outGlob})`);
  process.stdout.write(`${line}\n`);
}

/** results.csv (the CSV's columns, then the job's) and the closing lines. */
function writeRowResults(run: BulkInputRun, total: number, filter: string, submit: boolean): void {
  const { dir, failures } = run;
  mkdirSync(dir, { recursive: true });
  const resultsPath = join(dir, 'results.csv');
  const columns = [
    CONFIG_COLUMN,
    'job_name',
    ...run.csv.columns,
    'slurm_job_id',
    'sflow_output_dir',
    'sflow_batch_dir',
  ];
  writeFileSync(resultsPath, stringify(run.results, { header: true, columns }));
  process.stdout.write(
    `Generated ${run.generated}/${total} job script(s)${filter}${failures.length ? `, ${failures.length} failed` : ''}${submit ? `, ${run.submitted} submitted` : ''}\n  scripts: ${dir}\n  results: ${resultsPath}\n`,
  );
  for (const f of failures) process.stderr.write(`✗ ${f}\n`);
  if (!submit && run.generated) process.stdout.write('ℹ add --submit to submit them with sbatch\n');
}
