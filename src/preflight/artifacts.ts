/**
 * Artifact preflight (spec config.md §1.6.3): fs:// paths must exist (a warning with
 * --skip-artifact-check), file:// paths without content only warn. Runs on dry-runs too.
 */
import { existsSync } from 'node:fs';
import { SflowError } from '../config/errors.js';
import type { PlannedArtifact } from '../plan/types.js';
import { locate } from '../config/source.js';

export function checkArtifactPaths(artifacts: PlannedArtifact[], skip: boolean, doc?: unknown): string[] {
  const warnings: string[] = [];
  const errors: string[] = [];
  let firstBad = -1;
  artifacts.forEach((a, i) => {
    if (a.content !== undefined) return;
    if (a.scheme !== 'fs' && a.scheme !== 'file') return;
    if (existsSync(a.path)) return;
    if (a.scheme === 'file') warnings.push(`Artifact '${a.name}' (file://) path does not exist: ${a.path}`);
    else if (skip)
      warnings.push(
        `Artifact '${a.name}' (fs://) path does not exist: ${a.path} (--skip-artifact-check: left alone)`,
      );
    else {
      errors.push(`Artifact '${a.name}' (fs://) path does not exist: ${a.path}`);
      if (firstBad < 0) firstBad = i;
    }
  });
  if (errors.length) {
    throw new SflowError(
      'preflight.artifacts',
      `Artifact path validation failed:\n  ${errors.join('\n  ')}`,
      {
        phase: 'preflight',
        location:
          doc !== undefined && firstBad >= 0 ? locate(doc, ['artifacts', firstBad, 'uri']) : undefined,
        hint: 'create the paths, point the artifacts elsewhere with -a NAME=fs:///path, or pass --skip-artifact-check',
      },
    );
  }
  return warnings;
}
