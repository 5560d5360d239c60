/**
 * `sflow compose --bulk-input rows.csv [--row SEL] [--validate]` (cli.md §9.3, config.md §4.9):
 * one composed recipe per CSV row into `<out>/compose_<YYYYMMDD-HHMMSS>/<row name>.yaml`.
 * A row that fails is reported and the others still compose; the exit code is 1 if any failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readBulkCsv, rowFiles, rowNames, selectRows, type BulkRow } from '../config/bulk-csv.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { formatSflowError, isSflowError, SflowError } from '../util/sflow-error.js';
import { loadRecipe } from '../config/load.js';
import { composeError, composeText, quietDryRun } from './compose.js';
import { inputFiles } from './common.js';
import { errorMessage } from '../util/errors.js';

type Obj = Record<string, unknown>;

function names(list: unknown): string[] {
  return Array.isArray(list) ? list.map((x: Obj) => String(x?.name)) : [];
}

function stamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

const message = (e: unknown) => (isSflowError(e) ? formatSflowError(e) : errorMessage(e));

export async function composeBulkCommand(
  positional: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  try {
    return await composeBulk(positional, opts);
  } catch (e) {
    return composeError(e);
  }
}

async function composeBulk(positional: string[], opts: Record<string, unknown>): Promise<number> {
  const cliFiles = inputFiles(positional, opts);
  const cliSets = (opts.set as string[] | undefined) ?? [];
  const cliArtifacts = (opts.artifact as string[] | undefined) ?? [];
  const cliMissable = (opts.missableTasks as string[] | undefined) ?? [];
  const csv = readBulkCsv(String(opts.bulkInput));
  const chosen = (opts.row as string[] | undefined)?.length
    ? selectRows(opts.row as string[], csv.rows.length)
    : csv.rows.map((r) => r.index);
  const rows = csv.rows.filter((r) => chosen.includes(r.index));
  // names come from all rows, so a row keeps its name whichever rows are selected
  const allNames = rowNames(csv.rows);
  const labels = new Map(csv.rows.map((r, i) => [r.index, allNames[i]]));
  const failures: string[] = [];
  const warn = (s: string) => process.stderr.write(`⚠ ${s}\n`);

  // what each row's recipe declares, before any override: the columns must name one of these
  const declared = new Map<number, { vars: Set<string>; artifacts: Set<string> }>();
  for (const r of rows) {
    try {
      const base = loadRecipe({
        files: rowFiles(cliFiles, r),
        missable: [...cliMissable, ...r.missable],
        allowMissableWithOneFile: true,
      });
      declared.set(r.index, {
        vars: new Set(names(base.doc.variables)),
        artifacts: new Set(names(base.doc.artifacts)),
      });
    } catch (e) {
      failures.push(`row ${r.index} (${csv.path}:${r.line}): ${message(e)}`);
    }
  }
  const known = (c: string) => [...declared.values()].some((d) => d.vars.has(c) || d.artifacts.has(c));
  const unknown = csv.columns.filter((c) => !known(c));
  if (unknown.length && declared.size > 0)
    throw new SflowError(
      'bulk.csv_unknown_column',
      `${csv.path}:1:1: column(s) ${unknown.map((c) => `'${c}'`).join(', ')} name no variable or artifact of the rows' recipes`,
      {
        phase: 'load',
        hint: 'a column other than sflow_config_file, job_name and missable_tasks overrides a declared variable or artifact',
      },
    );

  const outRoot = resolve(typeof opts.output === 'string' ? opts.output : 'sflow_output');
  const dir = join(outRoot, `compose_${stamp()}`);
  let written = 0;
  for (const r of rows) {
    const d = declared.get(r.index);
    if (!d) continue;
    const label = labels.get(r.index) as string;
    try {
      const { sets, artifacts } = rowOverrides(r, d, cliSets, cliArtifacts, (s) =>
        warn(`row ${r.index}: ${s}`),
      );
      const loaded = loadRecipe({
        files: rowFiles(cliFiles, r),
        set: sets,
        artifacts,
        missable: [...cliMissable, ...r.missable],
        allowMissableWithOneFile: true,
      });
      const text = composeText(opts.resolve ? resolveComposed(loaded.doc) : loaded.doc);
      mkdirSync(dir, { recursive: true });
      const out = join(dir, `${label}.yaml`);
      writeFileSync(out, text);
      written++;
      process.stdout.write(`  row ${r.index} → ${out}\n`);
      if (opts.validate) {
        const problem = await quietDryRun(loaded);
        if (problem) warn(`row ${r.index} (${label}) does not dry-run: ${problem}`);
      }
    } catch (e) {
      failures.push(`row ${r.index} (${csv.path}:${r.line}): ${message(e)}`);
    }
  }
  if (written) process.stdout.write(`Composed ${written} of ${rows.length} row(s) -> ${dir}\n`);
  for (const f of failures) process.stderr.write(`✗ ${f}\n`);
  return failures.length ? 1 : 0;
}

/** The row's cells as --set / --artifact: CSV beats --set, --artifact beats CSV (both warned). */
export function rowOverrides(
  r: BulkRow,
  d: { vars: Set<string>; artifacts: Set<string> },
  cliSets: string[],
  cliArtifacts: string[],
  warn: (s: string) => void,
): { sets: string[]; artifacts: string[] } {
  const key = (a: string) => a.slice(0, Math.max(0, a.indexOf('=')));
  const csvVars = Object.entries(r.cells).filter(([c]) => d.vars.has(c));
  const csvArts = Object.entries(r.cells).filter(([c]) => d.artifacts.has(c));
  const cliArtNames = new Set(cliArtifacts.map(key));
  const sets = cliSets.filter((s) => {
    const clash = csvVars.some(([c]) => c === key(s));
    if (clash) warn(`the CSV value of ${key(s)} overrides --set ${s}`);
    return !clash;
  });
  for (const [c] of csvArts.filter(([c]) => cliArtNames.has(c)))
    warn(`--artifact ${c} overrides the CSV value of ${c}`);
  return {
    sets: [...sets, ...csvVars.map(([c, v]) => `${c}=${v}`)],
    artifacts: [
      ...csvArts.filter(([c]) => !cliArtNames.has(c)).map(([c, v]) => `${c}=${v}`),
      ...cliArtifacts,
    ],
  };
}
