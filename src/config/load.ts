/**
 * The load phase (spec config.md §1.1, §4): files → parsed YAML with positions → named
 * collections in list form → expression syntax check → merge → `--set`/`--artifact` →
 * `--missable-tasks` → `required_by` folding → schema validation. Produces a typed Recipe plus the
 * merged document (with positions) that later phases use to point at the source of a problem.
 */
import { SflowError, type ErrorDetail, type SourceLocation } from '../util/sflow-error.js';
import { normaliseCollections } from './collections.js';
import { mergeDocuments, type FileContribution } from './merge.js';
import { applyArtifactOverrides, applySetOverrides, type SetOverride } from './overrides.js';
import { foldRequiredBy, stripMissableTasks } from './missable.js';
import { readYamlFile, type ParsedFile } from './yaml-load.js';
import { entryOrigin, formatPath, locate, locateInText, type PathSeg } from './source.js';
import { compileCached } from './templates.js';
import { ExprSyntaxError, hasExpression } from './expr/index.js';
import { validateRecipe, type Recipe } from './schema/index.js';
import { applySecretSources, type SecretSources } from './secret-variables.js';

type Obj = Record<string, unknown>;

export interface LoadOptions {
  files: string[];
  set?: string[];
  artifacts?: string[];
  missable?: string[];
  /** bulk/batch modes allow --missable-tasks with a single file */
  allowMissableWithOneFile?: boolean;
  /** secret values from the environment, files or a prompt (commands that run the recipe) */
  secrets?: SecretSources;
}

export interface LoadWarning {
  message: string;
  location?: SourceLocation;
}

export interface LoadedRecipe {
  recipe: Recipe;
  /** merged document (list form, pre-validation) whose containers carry source positions */
  doc: Obj;
  files: string[];
  warnings: LoadWarning[];
  contributions: FileContribution[];
  setOverrides: SetOverride[];
  artifactOverrides: { name: string; uri: string }[];
  missableRemovals: string[];
}

export function loadRecipe(opts: LoadOptions): LoadedRecipe {
  if (opts.files.length === 0) {
    throw new SflowError('cli.no_files', 'no input files provided', {
      phase: 'usage',
      hint: 'pass a recipe with -f FILE',
    });
  }
  if (opts.missable?.length && opts.files.length < 2 && !opts.allowMissableWithOneFile) {
    throw new SflowError(
      'cli.missable_one_file',
      '--missable-tasks is only valid with multiple input files',
      {
        phase: 'usage',
        hint: 'compose several fragments with -f a.yaml -f b.yaml, or drop -M',
      },
    );
  }
  const warnings: LoadWarning[] = [];
  const parsed: ParsedFile[] = opts.files.map((f) => {
    const p = readYamlFile(f);
    warnings.push(...p.warnings);
    normaliseCollections(p.value);
    checkExpressionSyntax(p);
    return p;
  });
  let doc: Obj;
  let contributions: FileContribution[] = [];
  if (parsed.length === 1) {
    doc = parsed[0].value;
  } else {
    const m = mergeDocuments(parsed);
    doc = m.doc;
    contributions = m.contributions;
    warnings.push(...m.warnings.map((w) => ({ message: `merge: ${w.message}`, location: w.location })));
  }
  const setOverrides = applySetOverrides(doc, opts.set ?? []);
  applySecretSources(doc, opts.secrets, new Set(setOverrides.map((o) => o.key)));
  const artifactOverrides = applyArtifactOverrides(doc, opts.artifacts ?? []);
  let missableRemovals: string[] = [];
  if (opts.missable?.length) {
    const r = stripMissableTasks(doc, opts.missable);
    missableRemovals = r.removed;
    if (r.removed.length) {
      warnings.push({
        message: `Missable tasks: removed ${r.removed.length} reference(s) to absent tasks: ${r.removed.join('; ')}`,
      });
    }
    for (const u of r.unused)
      warnings.push({ message: `--missable-tasks '${u}' matched no task and no reference` });
  }
  foldRequiredBy(doc);
  const v = validateRecipe(doc);
  if (!v.ok) {
    const details: ErrorDetail[] = v.issues.map((i) => ({
      message: i.message,
      path: formatPath(i.path),
      location: locate(doc, i.path, i.atKey),
      hint: i.hint,
    }));
    const first = details[0];
    throw new SflowError(
      'config.validation',
      details.length === 1
        ? `Configuration validation failed: ${first.path ? first.path + ': ' : ''}${first.message}`
        : `Configuration validation failed (${details.length} problems):`,
      {
        phase: 'load',
        location: first?.location,
        hint: details.length === 1 ? first.hint : undefined,
        details: details.length === 1 ? [] : details,
      },
    );
  }
  for (const w of v.warnings) warnings.push({ message: w.message, location: locate(doc, w.path, true) });
  return {
    recipe: v.recipe,
    doc,
    files: opts.files,
    warnings,
    contributions,
    setOverrides,
    artifactOverrides,
    missableRemovals,
  };
}

/** Compile (not evaluate) every `${{ }}` string of one file; report all syntax errors together. */
function checkExpressionSyntax(p: ParsedFile): void {
  const details: ErrorDetail[] = [];
  const walk = (v: unknown, path: PathSeg[], parent?: unknown): void => {
    if (typeof v === 'string') {
      if (!hasExpression(v)) return;
      try {
        compileCached(v);
      } catch (e) {
        if (!(e instanceof ExprSyntaxError)) throw e;
        const base = locate(p.value, path);
        const exact = locateInText(entryOrigin(parent, path[path.length - 1]), v, e.offset);
        details.push({
          message: `${e.message} in ${JSON.stringify(v.length > 120 ? v.slice(0, 117) + '...' : v)}`,
          path: formatPath(path),
          location: exact ?? (base ? offsetLocation(base, v, e.offset) : undefined),
          hint: 'expressions use Jinja2 syntax inside ${{ … }}, e.g. ${{ variables.N * 2 }}',
        });
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i], v));
    else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k], v);
  };
  walk(p.value, []);
  if (details.length) {
    throw new SflowError('config.expression_syntax', `expression syntax validation failed in ${p.file}`, {
      phase: 'load',
      location: details[0].location,
      hint: details[0].hint,
      details: details.map((d) => ({ ...d, hint: undefined })),
    });
  }
}

/** Best effort: for single-line scalars, move the column to the offending character. */
function offsetLocation(base: SourceLocation, text: string, offset: number): SourceLocation {
  const before = text.slice(0, Math.max(0, offset));
  if (before.includes('\n')) {
    const lines = before.split('\n');
    return { file: base.file, line: base.line + lines.length - 1, col: base.col };
  }
  return base;
}
