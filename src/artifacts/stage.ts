/**
 * Artifacts on a real run, called by the CLI (the composition root): before anything is
 * allocated, http(s):// downloads into the cache (or reuses it); on the final plan, an fs:// path
 * the preflight could not check (it depended on an expression) that is missing on the controller
 * is warned about and left alone. hf://, huggingface:// and docker:// never get here: the not-yet table
 * (src/plan/not-yet.ts) refuses them first, naming each artifact (A2).
 * Inline file:// content is written with the run directory (outputs/run-dir.ts).
 */
import { existsSync } from 'node:fs';
import { SflowError } from '../config/errors.js';
import type { LoadedRecipe } from '../config/load.js';
import type { Plan } from '../plan/types.js';
import { literalGlobals, preflightPath } from '../preflight/artifacts.js';
import { errorMessage } from '../util/errors.js';
import { redactUrl } from '../util/redact.js';
import { downloadToCache, type DownloadSettings } from './http-cache.js';

export interface StageOptions {
  say: (line: string) => void;
  settings?: DownloadSettings;
  signal?: AbortSignal;
}

/** http(s):// artifacts into the cache (or found there); throws a located-by-name error when one fails. */
export async function stageArtifacts(plan: Plan, o: StageOptions): Promise<void> {
  for (const a of plan.artifacts) {
    if (a.scheme !== 'http' && a.scheme !== 'https') continue;
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
      throw new SflowError('run.artifact_download', `Artifact '${a.name}': ${errorMessage(e)}`, {
        phase: 'run',
        hint: `check that ${redactUrl(a.uri)} is reachable from this machine, or download it yourself and use -a ${a.name}=fs:///path`,
      });
    }
  }
}

/**
 * On the final plan (paths may depend on the allocation): fs:// paths the preflight could not
 * check that are missing on the controller — warned about, left alone.
 */
export function missingArtifactWarnings(loaded: LoadedRecipe, plan: Plan): string[] {
  const literals = literalGlobals(loaded);
  const raw = new Map(
    (((loaded.recipe as Record<string, unknown>).artifacts as RawArtifact[] | undefined) ?? []).map((a) => [
      a.name,
      a,
    ]),
  );
  return plan.artifacts.flatMap((a) => {
    if (a.scheme !== 'fs' || existsSync(a.path)) return [];
    const r = raw.get(a.name);
    const checked = r ? preflightPath(r, literals, plan.paths.workspaceDir) !== undefined : true;
    return checked
      ? []
      : [
          `Artifact '${a.name}' (fs://) path does not exist on this machine: ${a.path} (left alone; it must exist where the tasks run)`,
        ];
  });
}

interface RawArtifact {
  name: string;
  uri: string;
  content?: unknown;
}
