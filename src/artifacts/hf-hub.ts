/**
 * `hf://` / `huggingface://` artifacts on a real run: the files of one repository at one revision
 * are downloaded from the Hugging Face Hub's HTTP API into the workspace's artifact cache
 * (plan/hf-ref.ts names the folder) and reused by later runs.
 *
 *  - Listing: `GET <endpoint>/api/<models|datasets|spaces>/<repo>/revision/<rev>?blobs=true` gives
 *    the commit (`sha`) and every file (`siblings[].rfilename`, `size`, `blobId`, `lfs.sha256`).
 *  - Files: `GET <endpoint>/[datasets/|spaces/]<repo>/resolve/<commit>/<file>`, every file of one
 *    run from the same commit; body checked against the listed size and (LFS) SHA-256; written
 *    under a temporary name and renamed into place (http-cache.ts: bounded, retried, progress).
 *  - `HF_ENDPOINT` (a mirror; default https://huggingface.co); the token from `HF_TOKEN` (or
 *    `HUGGING_FACE_HUB_TOKEN`, or the file `huggingface-cli login` writes: `$HF_TOKEN_PATH`, else
 *    `$HF_HOME/token`, else `~/.cache/huggingface/token`) goes in an `Authorization` header only,
 *    to the endpoint's own origin (never across a redirect to another host), never in a printed
 *    line; `HF_HUB_OFFLINE=1` never asks the Hub.
 *  - Cache: `.sflow-hf.json` in the folder records the commit, the listing and the files that are
 *    complete. A file is reused when the commit's listing has the same blob for it; a pinned
 *    commit with every wanted file present asks the Hub nothing; when the Hub cannot be reached,
 *    files already complete are used with a warning. Files the new commit changed or dropped
 *    are removed.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hfCacheDir, parseHfUri, type HfRef } from '../plan/hf-ref.js';
import { stripAnsi } from '../util/ansi.js';
import { errorMessage } from '../util/errors.js';
import { deadline } from '../util/deadline.js';
import { sleep } from '../util/sleep.js';
import { downloadSettings, downloadToCache, fetchFollowing, type DownloadSettings } from './http-cache.js';

export const HF_MANIFEST = '.sflow-hf.json';

interface Entry {
  size?: number;
  /** git blob id or LFS oid: what says a file changed */
  blob?: string;
  sha256?: string;
}

interface Manifest {
  repo: string;
  revision: string;
  commit: string;
  files: Record<string, Entry>;
  /** files complete on disk */
  have: string[];
}

export interface HfOptions {
  say: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  settings?: DownloadSettings;
  signal?: AbortSignal;
}

export interface HfOutcome {
  commit: string;
  downloaded: number;
  reused: number;
  bytes: number;
  /** true: the Hub was not asked or could not be reached */
  offline: boolean;
}

const truthy = (v: string | undefined) => /^(1|true|yes|on)$/i.test(v ?? '');
/** a Hub message as printable text: escapes and control characters become spaces, 300 chars at most */
const clean = (s: string) =>
  [...stripAnsi(s)]
    .map((c) => (c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) < 0xa0) ? ' ' : c))
    .join('')
    .slice(0, 300);

/** the Hub's endpoint (`HF_ENDPOINT`, no trailing slash) */
export const hfEndpoint = (env: NodeJS.ProcessEnv): string =>
  (env.HF_ENDPOINT?.trim() || 'https://huggingface.co').replace(/\/+$/, '');

/** the token sflow sends, or undefined; never printed */
export function hfToken(env: NodeJS.ProcessEnv): string | undefined {
  const direct = env.HF_TOKEN?.trim() || env.HUGGING_FACE_HUB_TOKEN?.trim();
  if (direct) return direct;
  const file =
    env.HF_TOKEN_PATH ||
    join(env.HF_HOME || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'huggingface'), 'token');
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');
const typeSegment = { model: 'models', dataset: 'datasets', space: 'spaces' } as const;

export function listingUrl(endpoint: string, ref: HfRef): string {
  return `${endpoint}/api/${typeSegment[ref.type]}/${ref.repo}/revision/${encodeURIComponent(ref.revision)}?blobs=true`;
}

export function resolveUrl(endpoint: string, ref: HfRef, commit: string, file: string): string {
  const prefix = ref.type === 'model' ? '' : `${typeSegment[ref.type]}/`;
  return `${endpoint}/${prefix}${ref.repo}/resolve/${encodeURIComponent(commit)}/${encodePath(file)}`;
}

class HubError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
  ) {
    super(message);
  }
}

/** what a failed Hub answer means, in words (the Hub's X-Error-Code / X-Error-Message) */
function hubStatus(res: Response, ref: HfRef, tokenSent: boolean): HubError {
  const code = res.headers.get('x-error-code') ?? '';
  const said = clean(res.headers.get('x-error-message') ?? '');
  const where = `${ref.repo}@${ref.revision}`;
  const why =
    code === 'GatedRepo'
      ? `${where} is gated: accept its conditions on the Hub${tokenSent ? '' : ' and set HF_TOKEN'}`
      : code === 'RevisionNotFound'
        ? `revision '${ref.revision}' does not exist in ${ref.repo}`
        : res.status === 401 || res.status === 403 || code === 'RepoNotFound'
          ? `${where} was not found or is private${tokenSent ? ' (the token was refused or has no access)' : ' (no HF_TOKEN was sent)'}`
          : res.status === 404
            ? `${where} was not found`
            : `the Hub answered HTTP ${res.status}`;
  const retriable = res.status >= 500 || res.status === 429 || res.status === 408;
  return new HubError(`${why}${said && !why.includes(said) ? ` (${said})` : ''}`, retriable);
}

/** the revision's listing, bounded and retried */
async function fetchListing(
  ref: HfRef,
  endpoint: string,
  headers: Record<string, string>,
  s: DownloadSettings,
  signal: AbortSignal | undefined,
): Promise<{ commit: string; files: Record<string, Entry> }> {
  const url = listingUrl(endpoint, ref);
  let last: unknown;
  for (let n = 1; n <= s.attempts; n++) {
    const limit = deadline(
      s.headersTimeoutMs * 2,
      signal ? [signal] : [],
      `no listing within ${(s.headersTimeoutMs * 2) / 1000}s`,
    );
    try {
      const res = await fetchFollowing(url, headers, limit.signal);
      if (!res.ok) throw hubStatus(res, ref, Boolean(headers.authorization));
      const body = (await res.json()) as { sha?: unknown; siblings?: unknown };
      if (typeof body.sha !== 'string' || !Array.isArray(body.siblings))
        throw new HubError(`the listing of ${ref.repo}@${ref.revision} has no commit or file list`, false);
      const files: Record<string, Entry> = {};
      for (const f of body.siblings as Array<Record<string, unknown>>) {
        if (typeof f.rfilename !== 'string') continue;
        const lfs = (f.lfs ?? {}) as Record<string, unknown>;
        files[f.rfilename] = {
          ...(typeof f.size === 'number' ? { size: f.size } : {}),
          ...(typeof f.blobId === 'string' ? { blob: f.blobId } : {}),
          ...(typeof lfs.sha256 === 'string' ? { sha256: lfs.sha256, blob: lfs.sha256 } : {}),
        };
      }
      return { commit: body.sha, files };
    } catch (e) {
      last = limit.signal.aborted && limit.signal.reason instanceof Error ? limit.signal.reason : e;
      if (signal?.aborted || (e instanceof HubError && !e.retriable) || n === s.attempts) break;
      await sleep(s.retryDelayMs * 2 ** (n - 1), signal);
    } finally {
      limit.dispose();
    }
  }
  throw last instanceof HubError
    ? last
    : new HubError(`cannot list ${ref.repo}@${ref.revision} at ${endpoint}: ${errorMessage(last)}`, true);
}

function readManifest(dir: string): Manifest | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, HF_MANIFEST), 'utf8')) as Manifest;
    return m && typeof m.commit === 'string' && m.files && Array.isArray(m.have) ? m : undefined;
  } catch {
    return undefined;
  }
}

function writeManifest(dir: string, m: Manifest): void {
  const tmp = join(dir, `${HF_MANIFEST}.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(m, null, 1));
  renameSync(tmp, join(dir, HF_MANIFEST));
}

/** the files of a listing the artifact wants: all, one file, or a folder's */
function wanted(files: Record<string, Entry>, ref: HfRef): string[] {
  const names = Object.keys(files).sort();
  if (!ref.path) return names;
  return names.filter((n) => n === ref.path || n.startsWith(`${ref.path}/`));
}

const complete = (dir: string, name: string, e: Entry | undefined): boolean => {
  try {
    const st = statSync(join(dir, name));
    return st.isFile() && (e?.size === undefined || st.size === e.size);
  } catch {
    return false;
  }
};

/** every wanted file of a recorded listing is complete: the cache answers without the Hub */
function fromCache(dir: string, ref: HfRef, m: Manifest | undefined): string[] | undefined {
  if (!m) return undefined;
  const want = wanted(m.files, ref);
  const have = new Set(m.have);
  return want.length && want.every((f) => have.has(f) && complete(dir, f, m.files[f])) ? want : undefined;
}

/** Makes the artifact's files present in its cache folder; throws an Error saying why not. */
export async function stageHfArtifact(uri: string, workspaceDir: string, o: HfOptions): Promise<HfOutcome> {
  const env = o.env ?? process.env;
  const s = o.settings ?? downloadSettings(env);
  const ref = parseHfUri(uri);
  const dir = hfCacheDir(workspaceDir, ref);
  const old = readManifest(dir);
  const cached = fromCache(dir, ref, old);
  const pinned = /^[0-9a-f]{40}$/.test(ref.revision);
  if (cached && old && (pinned || truthy(env.HF_HUB_OFFLINE)))
    return { commit: old.commit, downloaded: 0, reused: cached.length, bytes: 0, offline: true };
  if (truthy(env.HF_HUB_OFFLINE))
    throw new Error(
      `HF_HUB_OFFLINE is set and ${ref.repo}@${ref.revision}${ref.path ? `/${ref.path}` : ''} is not complete in the cache`,
    );
  const endpoint = hfEndpoint(env);
  const token = hfToken(env);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  let listing: { commit: string; files: Record<string, Entry> };
  try {
    listing = await fetchListing(ref, endpoint, headers, s, o.signal);
  } catch (e) {
    if (cached && old && !(e instanceof HubError && !e.retriable)) {
      o.say(
        `⚠ ${ref.repo}@${ref.revision}: the Hub could not be reached (${errorMessage(e)}); using the cached files of commit ${old.commit.slice(0, 12)}`,
      );
      return { commit: old.commit, downloaded: 0, reused: cached.length, bytes: 0, offline: true };
    }
    throw e;
  }
  const want = wanted(listing.files, ref);
  if (want.length === 0)
    throw new Error(
      `${ref.repo}@${ref.revision} (commit ${listing.commit.slice(0, 12)}) has no file ${ref.path ? `or folder '${ref.path}'` : 'at all'}`,
    );
  mkdirSync(dir, { recursive: true });
  // what the old commit had that this one changed or dropped goes (the folder is one commit)
  const still = (old?.have ?? []).filter((f) => {
    const same = old?.files[f]?.blob !== undefined && old.files[f].blob === listing.files[f]?.blob;
    if (!same) rmSync(join(dir, f), { force: true });
    return same && complete(dir, f, listing.files[f]);
  });
  const have = new Set(still);
  const record = () =>
    writeManifest(dir, {
      repo: ref.repo,
      revision: ref.revision,
      commit: listing.commit,
      files: listing.files,
      have: [...have].sort(),
    });
  let bytes = 0;
  let downloaded = 0;
  const todo = want.filter((f) => !have.has(f));
  try {
    for (const [i, f] of todo.entries()) {
      const e = listing.files[f];
      const r = await downloadToCache(resolveUrl(endpoint, ref, listing.commit, f), join(dir, f), {
        label: `${ref.repo}/${f} (${i + 1}/${todo.length})`,
        say: o.say,
        settings: s,
        signal: o.signal,
        headers,
        expect: {
          ...(e.size !== undefined ? { size: e.size } : {}),
          ...(e.sha256 ? { sha256: e.sha256 } : {}),
        },
        replace: true,
      });
      bytes += r.bytes ?? 0;
      downloaded++;
      have.add(f);
    }
  } finally {
    record();
  }
  return { commit: listing.commit, downloaded, reused: want.length - downloaded, bytes, offline: false };
}
