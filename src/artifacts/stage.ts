/**
 * Artifacts on a real run, called by the CLI (the composition root): before anything is
 * allocated, http(s):// downloads into the cache (or reuses it), hf:// / huggingface:// fetch
 * their repository's files from the Hub (hf-hub.ts), docker:// images are made present on the
 * engines the tasks run on (docker-images.ts); on the final plan, an fs:// path the
 * preflight could not check (it depended on an expression) that is missing on the controller is
 * warned about and left alone.
 * Inline file:// content is written with the run directory (outputs/run-dir.ts).
 */
import { existsSync } from 'node:fs';
import { SflowError } from '../util/sflow-error.js';
import type { LoadedRecipe } from '../config/load.js';
import type { Plan, PlannedArtifact } from '../plan/types.js';
import { literalGlobals, preflightPath } from '../preflight/artifacts.js';
import { errorMessage } from '../util/errors.js';
import { redactUrl } from '../util/redact.js';
import { stageDockerImages } from './docker-images.js';
import { stageHfArtifact } from './hf-hub.js';
import { downloadToCache, type DownloadSettings } from './http-cache.js';

export interface StageOptions {
  say: (line: string) => void;
  settings?: DownloadSettings;
  signal?: AbortSignal;
  /** HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE (default: this process's) */
  env?: NodeJS.ProcessEnv;
}

/** an hf:// artifact's files into the cache (or found there) */
async function stageHf(a: PlannedArtifact, plan: Plan, o: StageOptions): Promise<void> {
  try {
    const r = await stageHfArtifact(a.uri, plan.paths.workspaceDir, {
      say: o.say,
      ...(o.env ? { env: o.env } : {}),
      ...(o.settings ? { settings: o.settings } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const at = `commit ${r.commit.slice(0, 12)}`;
    o.say(
      r.downloaded
        ? `✓ artifact '${a.name}': ${at}, ${r.downloaded} file(s) downloaded (${r.bytes} bytes)${r.reused ? `, ${r.reused} cached` : ''} → ${a.path}`
        : `✓ artifact '${a.name}': ${at}, using the ${r.reused} cached file(s)${r.offline ? ' (the Hub was not asked)' : ''} → ${a.path}`,
    );
  } catch (e) {
    throw new SflowError('run.artifact_download', `Artifact '${a.name}': ${errorMessage(e)}`, {
      phase: 'run',
      hint: `check ${a.uri}, HF_ENDPOINT and HF_TOKEN (gated or private repositories need a token with access), or download it yourself and use -a ${a.name}=fs:///path`,
    });
  }
}

/**
 * http(s):// and hf:// artifacts into the cache (or found there), docker:// images onto the
 * engines that run tasks; throws an error naming the artifact when one fails.
 */
export async function stageArtifacts(plan: Plan, o: StageOptions): Promise<void> {
  for (const a of plan.artifacts) {
    if (a.scheme === 'hf' || a.scheme === 'huggingface') {
      await stageHf(a, plan, o);
      continue;
    }
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
  await stageDockerImages(plan, {
    say: o.say,
    ...(o.env ? { env: o.env } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
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
