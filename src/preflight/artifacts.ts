/**
 * Artifact preflight (artifacts-batch.md A5, config.md §1.6.3), before anything is allocated, on
 * dry-runs too. It reads the recipe, not the plan, so a path that depends on an allocation is
 * never judged against placeholders:
 *  1. `${{ variables.X }}` is replaced by the literal value of global variable X; any `${{` left
 *     (another expression, a non-literal variable) → not checked here;
 *  2. only fs:// and file:// without `content`;
 *  3. a path still holding `$` or `{` (shell variables) → not checked;
 *  4. a missing fs:// path is an error (a warning with --skip-artifact-check, and the path is left
 *     alone), a missing file:// path a warning; all errors are reported together.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, normalize, resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import type { LoadedRecipe } from '../config/load.js';
import { locate } from '../config/source.js';
import { renderValue, type Value } from '../config/expr/index.js';
import { artifactScheme, uriPathText } from '../plan/artifacts.js';

type Obj = Record<string, unknown>;

const VAR_REF = /\$\{\{\s*variables\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Global variables whose value holds no expression, rendered as tasks see them. */
export function literalGlobals(loaded: LoadedRecipe): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of ((loaded.recipe as Obj).variables as Obj[] | undefined) ?? []) {
    const value = v.value;
    if (typeof value === 'string' && value.includes('${{')) continue;
    out.set(String(v.name), value === null || value === undefined ? 'None' : renderValue(value as Value));
  }
  return out;
}

/** The local path preflight checks for one artifact, or undefined when it is not checked (A5 1–3). */
export function preflightPath(
  a: { uri: string; content?: unknown },
  literals: Map<string, string>,
  workspaceDir: string,
): { scheme: 'fs' | 'file'; path: string } | undefined {
  if (a.content !== undefined && a.content !== null) return undefined;
  const uri = a.uri.replace(VAR_REF, (m, name: string) => literals.get(name) ?? m);
  if (uri.includes('${{')) return undefined;
  const scheme = artifactScheme(uri);
  if (scheme !== 'fs' && scheme !== 'file') return undefined;
  const text = uriPathText(uri);
  if (/[${]/.test(text)) return undefined;
  return { scheme, path: isAbsolute(text) ? normalize(text) : resolve(workspaceDir, text) };
}

export function checkArtifactPaths(loaded: LoadedRecipe, workspaceDir: string, skip: boolean): string[] {
  const warnings: string[] = [];
  const errors: string[] = [];
  let firstBad = -1;
  const literals = literalGlobals(loaded);
  const artifacts = ((loaded.recipe as Obj).artifacts as Obj[] | undefined) ?? [];
  artifacts.forEach((a, i) => {
    const name = String(a.name);
    const target = preflightPath({ uri: String(a.uri), content: a.content }, literals, workspaceDir);
    if (!target || existsSync(target.path)) return;
    if (target.scheme === 'file')
      warnings.push(`Artifact '${name}' (file://) path does not exist: ${target.path}`);
    else if (skip)
      warnings.push(
        `Artifact '${name}' (fs://) path does not exist: ${target.path} (--skip-artifact-check: left alone, not created)`,
      );
    else {
      errors.push(`Artifact '${name}' (fs://) path does not exist: ${target.path}`);
      if (firstBad < 0) firstBad = i;
    }
  });
  if (errors.length) {
    throw new SflowError(
      'preflight.artifacts',
      `Artifact path validation failed:\n  ${errors.join('\n  ')}`,
      {
        phase: 'preflight',
        location: firstBad >= 0 ? locate(loaded.doc, ['artifacts', firstBad, 'uri']) : undefined,
        hint: 'create the paths, point the artifacts elsewhere with -a NAME=fs:///path, or pass --skip-artifact-check when the paths exist only where the tasks run',
      },
    );
  }
  return warnings;
}
