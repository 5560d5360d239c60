/**
 * Artifacts on a real run, called by the CLI (the composition root):
 * - `refuseUnimplementedArtifacts` on the trial plan, before anything is allocated: hf://,
 *   huggingface:// and docker:// fail with a not-implemented error naming each artifact (A2);
 * - `stageArtifacts` on the real plan, before any task starts: http(s):// downloads into the
 *   cache (or reuses it), and an fs:// path the preflight could not check (it depended on an
 *   expression) that is missing on the controller is warned about and left alone.
 * Inline file:// content is written with the run directory (outputs/run-dir.ts).
 */
import { existsSync } from 'node:fs';
import { SflowError } from '../config/errors.js';
import type { LoadedRecipe } from '../config/load.js';
import { UNIMPLEMENTED_SCHEMES } from '../plan/artifacts.js';
import type { Plan } from '../plan/types.js';
import { literalGlobals, preflightPath } from '../preflight/artifacts.js';
import { redactUrl } from '../util/redact.js';
import { downloadToCache, type DownloadSettings } from './http-cache.js';

export function refuseUnimplementedArtifacts(plan: Plan): void {
  const bad = plan.artifacts.filter((a) => UNIMPLEMENTED_SCHEMES.has(a.scheme));
  if (bad.length === 0) return;
  throw new SflowError(
    'run.artifact_not_implemented',
    `Artifact scheme not implemented: ${bad.map((a) => `'${a.name}' (${a.uri})`).join(', ')} cannot be materialised yet`,
    {
      phase: 'preflight',
      hint: 'hf://, huggingface:// and docker:// artifacts are accepted by --dry-run only; point the artifact at a local copy (-a NAME=fs:///path) or pull inside the task',
    },
  );
}

export interface StageOptions {
  say: (line: string) => void;
  settings?: DownloadSettings;
  signal?: AbortSignal;
}

/** Returns the warnings to record in the run. */
export async function stageArtifacts(loaded: LoadedRecipe, plan: Plan, o: StageOptions): Promise<string[]> {
  const warnings: string[] = [];
  const literals = literalGlobals(loaded);
  const raw = new Map(
    (
      ((loaded.recipe as Record<string, unknown>).artifacts as Array<{
        name: string;
        uri: string;
        content?: unknown;
      }>) ?? []
    ).map((a) => [a.name, a]),
  );
  for (const a of plan.artifacts) {
    if (a.scheme === 'http' || a.scheme === 'https') {
      try {
        const r = await downloadToCache(a.uri, a.path, {
          label: `artifact '${a.name}'`,
          say: o.say,
          settings: o.settings,
          signal: o.signal,
        });
        o.say(
          r.cached
            ? `✓ artifact '${a.name}': using the cached copy ${a.path}`
            : `✓ artifact '${a.name}': downloaded ${r.bytes} bytes to ${a.path}`,
        );
      } catch (e) {
        throw new SflowError('run.artifact_download', `Artifact '${a.name}': ${(e as Error).message}`, {
          phase: 'run',
          hint: `check that ${redactUrl(a.uri)} is reachable from this machine, or download it yourself and use -a ${a.name}=fs:///path`,
        });
      }
    } else if (a.scheme === 'fs' && !existsSync(a.path)) {
      const r = raw.get(a.name);
      const checked = r ? preflightPath(r, literals, plan.paths.workspaceDir) !== undefined : true;
      if (!checked)
        warnings.push(
          `Artifact '${a.name}' (fs://) path does not exist on this machine: ${a.path} (left alone; it must exist where the tasks run)`,
        );
    }
  }
  return warnings;
}
