/**
 * `sflow batch --bulk-submit PATH…` (artifacts-batch.md C9): one sbatch job per self-contained
 * recipe, no merging. A PATH is a file, a folder (its `*.yaml` / `*.yml`, not recursive) or a
 * pattern with `*`, `?` or `[…]` in its last part (matched in that folder); positional files and
 * `-f` join the list. Only YAML mappings with a top-level `version` count; the list is
 * de-duplicated and sorted. Each job: name = the file's sanitised stem, its own dry-run, node
 * count from `--nodes`, else the recipe's slurm backend, else a SLURM_NODES / NUM_SLURM_NODES /
 * NUM_NODES variable. Scripts, recipes and `results.csv` go to `<output>/bulk_submit_<time>/`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { parse } from 'yaml';
import { SflowError } from '../util/sflow-error.js';
import { batchScheduler } from '../backends/registry.js';
import { batchScript, composedPathFor, type BatchScriptInput } from './batch-script.js';
import {
  ensureLogDirs,
  recipeField,
  validationFailure,
  writeJob,
  type BatchSetup,
  type PreparedJob,
  validateSetupJob,
} from './batch-job.js';
import { NODE_COLUMNS, stamp } from './batch-bulk.js';

const warn = (s: string) => process.stderr.write(`⚠ ${s}\n`);
const YAML = /\.ya?ml$/i;

/** `*`, `?`, `[…]` of one path part as a whole-name regex */
function partRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function expand(p: string): string[] {
  const abs = resolve(p);
  if (existsSync(abs) && statSync(abs).isDirectory())
    return readdirSync(abs)
      .filter((f) => YAML.test(f))
      .map((f) => join(abs, f));
  if (existsSync(abs)) return [abs];
  if (/[*?[]/.test(basename(abs)) && existsSync(dirname(abs))) {
    const re = partRegex(basename(abs));
    return readdirSync(dirname(abs))
      .filter((f) => re.test(f))
      .map((f) => join(dirname(abs), f));
  }
  warn(`--bulk-submit ${p}: no such file, folder or match`);
  return [];
}

/** a YAML mapping with a top-level `version`: a self-contained recipe */
function selfContained(path: string): boolean {
  try {
    const doc: unknown = parse(readFileSync(path, 'utf8'));
    return typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'version' in doc;
  } catch {
    return false;
  }
}

export function jobNameOf(path: string): string {
  const s = basename(path, extname(path))
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 30)
    .replace(/_$/, '');
  return s || 'job';
}

/** What the loop over the recipes gathers: results.csv rows, failures, counts. */
interface BulkRun {
  dir: string;
  results: Array<Record<string, string>>;
  failures: string[];
  generated: number;
  submitted: number;
}

export async function batchBulkSubmit(
  positional: string[],
  opts: Record<string, unknown>,
  s: BatchSetup,
): Promise<number> {
  const files = bulkFiles(positional, opts);
  const run: BulkRun = {
    dir: join(s.common.outputDir, `bulk_submit_${stamp()}`),
    results: [],
    failures: [],
    generated: 0,
    submitted: 0,
  };
  const used = new Set<string>();
  for (const file of files) {
    let name = jobNameOf(file);
    for (let k = 2; used.has(name); k++) name = `${jobNameOf(file)}_${k}`;
    used.add(name);
    const record = (jobId: string, out: string, status: string) =>
      run.results.push({
        sflow_config_file: file,
        job_name: name,
        slurm_job_id: jobId,
        sflow_output_dir: out,
        status,
      });
    const input = await prepareBulkJob(file, name, join(run.dir, `${name}.sh`), s);
    if ('skipped' in input) {
      run.failures.push(`${file}: SKIPPED: ${input.skipped}`);
      record('FAILED', '', input.status);
      continue;
    }
    run.generated++;
    await emitBulkJob(run, file, name, input, opts, s, record);
  }
  if (!opts.dryRun) writeBulkResults(run, files.length, Boolean(opts.submit));
  for (const f of run.failures) process.stderr.write(`✗ ${f}\n`);
  return run.failures.length ? 1 : 0;
}

/** The self-contained recipes named by `--bulk-submit`, the positional files and `-f`: sorted, once each. */
function bulkFiles(positional: string[], opts: Record<string, unknown>): string[] {
  const given = [
    ...((opts.bulkSubmit as string[] | undefined) ?? []),
    ...positional,
    ...((opts.file as string[] | undefined) ?? []),
  ];
  const files = [...new Set(given.flatMap(expand))].filter(selfContained).sort();
  if (!files.length)
    throw new SflowError('batch.bulk_submit_empty', `--bulk-submit ${given.join(' ')}: no recipe found`, {
      phase: 'usage',
      hint: 'a recipe is a YAML mapping with a top-level version: key (folders are scanned for *.yaml / *.yml)',
    });
  return files;
}

/**
 * One recipe's job: its own dry-run, its node count (`--nodes`, the recipe's backend, a node-count
 * variable) and its allocation settings; or why it is skipped and the status results.csv gets.
 */
async function prepareBulkJob(
  file: string,
  name: string,
  path: string,
  s: BatchSetup,
): Promise<PreparedJob | { skipped: string; status: string }> {
  let job;
  try {
    job = validateSetupJob(s, [file], true);
  } catch (e) {
    return { skipped: validationFailure(e).split('\n')[0], status: 'dry-run failed' };
  }
  for (const w of job.warnings) warn(`${basename(file)}: ${w}`);
  const vars = (job.loaded.doc.variables as Array<{ name?: unknown; value?: unknown }> | undefined) ?? [];
  const nodeVar = NODE_COLUMNS.map((n) => vars.find((v) => v?.name === n)?.value).find((v) =>
    /^\d+$/.test(String(v ?? '')),
  );
  const nodes = job.nodes ?? (nodeVar !== undefined ? Number(nodeVar) : undefined);
  if (nodes === undefined)
    return { skipped: 'cannot tell how many nodes the job needs (pass --nodes/-N)', status: 'no node count' };
  let alloc;
  try {
    alloc = await s.alloc.forJob(job.backend, name);
  } catch (e) {
    return { skipped: validationFailure(e).split('\n')[0], status: 'no allocation settings' };
  }
  const input: BatchScriptInput = {
    ...s.base,
    files: [file],
    // the job runs the composed copy written beside its script, the overrides applied in it
    composed: composedPathFor(path),
    sets: s.cliSets,
    artifacts: s.cliArtifacts,
    missable: s.cliMissable,
    nodes,
    nodesFrom:
      s.nodes !== undefined
        ? '-N/--nodes'
        : job.nodes !== undefined
          ? recipeField(job, 'nodes')
          : 'a SLURM_NODES / NUM_SLURM_NODES / NUM_NODES variable of the recipe',
    alloc,
  };
  return { job, input };
}

/** Prints the script (`--dry-run`), or writes it and, with `--submit`, submits it with sbatch. */
async function emitBulkJob(
  run: BulkRun,
  file: string,
  name: string,
  { job, input }: PreparedJob,
  opts: Record<string, unknown>,
  s: BatchSetup,
  record: (jobId: string, out: string, status: string) => void,
): Promise<void> {
  if (opts.dryRun) {
    process.stdout.write(`# ---- ${file}: ${name}.sh ----\n${batchScript(input)}`);
    return;
  }
  const path = join(run.dir, `${name}.sh`);
  writeJob(path, batchScript(input), job, Boolean(opts.resolve));
  let line = `  ${name}: ${path}`;
  if (opts.submit) {
    ensureLogDirs(input);
    const sub = await batchScheduler().submit(path);
    if ('error' in sub) {
      run.failures.push(`${file}: sbatch failed: ${sub.error}`);
      record('', '', 'sbatch failed');
      line += ' — sbatch FAILED';
    } else {
      run.submitted++;
      record(sub.jobId, join(s.common.outputDir, `${sub.jobId}-*`), 'submitted');
      line += ` — Slurm job ${sub.jobId}`;
    }
  } else record('not submitted', 'not submitted', 'generated');
  process.stdout.write(`${line}\n`);
}

/** results.csv and the closing lines: how many generated, failed, submitted, and where. */
function writeBulkResults(run: BulkRun, total: number, submit: boolean): void {
  const { dir } = run;
  mkdirSync(dir, { recursive: true });
  const columns = ['sflow_config_file', 'job_name', 'slurm_job_id', 'sflow_output_dir', 'status'];
  writeFileSync(join(dir, 'results.csv'), stringify(run.results, { header: true, columns }));
  process.stdout.write(
    `Generated ${run.generated}/${total} job script(s)${run.failures.length ? `, ${run.failures.length} failed` : ''}${submit ? `, ${run.submitted} submitted` : ''}\n  scripts: ${dir}\n  results: ${join(dir, 'results.csv')}\n`,
  );
  if (!submit && run.generated) process.stdout.write('ℹ add --submit to submit them with sbatch\n');
}
