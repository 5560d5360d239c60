/** `sflow compose`: merge recipe fragments into one plain recipe (optionally with variables inlined). */
import { stringify } from 'yaml';
import { loadRecipe, type LoadedRecipe } from '../config/load.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { isPlainObject } from '../config/collections.js';
import { inputFiles, loadOptions } from './common.js';
import { reportError } from './errors.js';
import { writeOutput } from '../outputs/write-output.js';
import { formatLocation, formatSflowError, isSflowError, SflowError } from '../util/sflow-error.js';

type Obj = Record<string, unknown>;

/**
 * Plain data for output: nulls removed (except a `value: null`, which is required: a variable
 * without a default must stay one), `match_pattern` written as `regex_pattern`.
 */
function clean(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clean);
  if (isPlainObject(v)) {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined || (x === null && k !== 'value')) continue;
      out[k === 'match_pattern' ? 'regex_pattern' : k] = clean(x);
    }
    return out;
  }
  return v;
}

export function composeText(doc: Obj): string {
  const ordered: Obj = { version: '0.1' };
  for (const [k, v] of Object.entries(clean(doc) as Obj)) if (k !== 'version') ordered[k] = v;
  const parts = Object.entries(ordered).map(([k, v]) =>
    stringify(
      { [k]: v },
      {
        blockQuote: 'literal',
        lineWidth: 0,
        defaultStringType: 'PLAIN',
        defaultKeyType: 'PLAIN',
        // YAML 1.1 as the loader reads it: a string like "on" or "yes" stays quoted (else it reads back as a boolean)
        version: '1.1',
      },
    ),
  );
  return separateTasks(parts.join('\n')).replace(/version: "0\.1"/, "version: '0.1'");
}

/** A blank line between tasks: inside the `workflow.tasks` block only, not before the first one. */
function separateTasks(text: string): string {
  const head = /^ {2}tasks:\n/m.exec(text);
  if (!head) return text;
  const start = head.index + head[0].length;
  const end = text.slice(start).search(/^ {0,2}\S/m);
  const stop = end < 0 ? text.length : start + end;
  const block = text.slice(start, stop).replace(/\n( {4}- )/g, '\n\n$1');
  return text.slice(0, start) + block + text.slice(stop);
}

export async function composeCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    if ((opts.row as string[] | undefined)?.length)
      throw new SflowError(
        'cli.row_needs_bulk',
        '--row selects rows of --bulk-input; there is no --bulk-input',
        {
          phase: 'usage',
        },
      );
    const files = inputFiles(positional, opts);
    if (files.length === 0)
      throw new SflowError('cli.no_files', 'no input files provided', {
        phase: 'usage',
        hint: 'pass the fragments to merge with -f a.yaml -f b.yaml',
      });
    const loaded = loadRecipe(loadOptions(files, opts));
    for (const w of loaded.warnings) {
      const at = formatLocation(w.location);
      process.stderr.write(
        `  compose ${w.message.startsWith('merge: ') ? 'override: ' + w.message.slice(7) : 'warning: ' + w.message}${at ? ` (${at})` : ''}\n`,
      );
    }
    const doc = opts.resolve ? resolveComposed(loaded.doc) : loaded.doc;
    const text = composeText(doc);
    if (typeof opts.output === 'string' && opts.output !== '-') {
      const out = writeOutput(opts.output, text);
      process.stdout.write(`Composed ${files.length} ${files.length === 1 ? 'file' : 'files'} -> ${out}\n`);
    } else process.stdout.write(text);
    if (opts.validate) {
      const problem = await quietDryRun(loaded);
      if (problem) process.stderr.write(`⚠ the composed recipe does not dry-run: ${problem}\n`);
    }
    return 0;
  } catch (e) {
    return composeError(e);
  }
}

/** compose's errors in the one shape every command uses (`✗ <kind>: …`, README "Errors") */
export function composeError(e: unknown): number {
  if (!isSflowError(e) || !e.message.startsWith('Configuration validation failed')) return reportError(e);
  // the merged document is what failed: say so (spec cli.md §9.3)
  const composed = new SflowError(e.code, `Composed c${e.message.slice(1)}`, {
    phase: e.phase,
    ...(e.location ? { location: e.location } : {}),
    ...(e.hint ? { hint: e.hint } : {}),
    details: e.details,
    exitCode: e.exitCode,
  });
  return reportError(composed);
}

/** A quiet dry-run of a loaded recipe (`--validate`): undefined when it plans, else the error text. */
export async function quietDryRun(loaded: LoadedRecipe): Promise<string | undefined> {
  const { buildPlan } = await import('../plan/build.js');
  const { makeRunId } = await import('../plan/run-id.js');
  const { backendCatalog } = await import('../backends/registry.js');
  try {
    const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
    buildPlan(loaded, {
      workspaceDir: process.cwd(),
      dryRun: true,
      runId: makeRunId(workflow),
      catalog: backendCatalog,
    });
    return undefined;
  } catch (e) {
    if (isSflowError(e)) return formatSflowError(e);
    throw e;
  }
}
