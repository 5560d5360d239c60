/**
 * `hf://` and `huggingface://` artifact URIs (pure: parsing and the cache folder's name). The
 * form is the one HfFileSystem reads:
 *
 *   hf://[datasets/|spaces/|models/]<namespace>/<name>[@<revision>][/<path in the repo>]
 *
 * The revision is a branch, tag or commit (default `main`; percent-encode a `/` in it:
 * `@refs%2Fpr%2F1`); the path names a file or a folder of the repo (empty: the whole repo). The
 * artifact's path is `<workspace>/.sflow_cache/artifacts/hf_<sha256(type:repo@revision)[:16]>`
 * plus the path in the repo, so artifacts of one repo and revision share one folder.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';

export type HfRepoType = 'model' | 'dataset' | 'space';

export interface HfRef {
  type: HfRepoType;
  /** `<namespace>/<name>` */
  repo: string;
  revision: string;
  /** a file or folder inside the repo, `/`-separated, no leading `/`; '' for the whole repo */
  path: string;
}

const PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const TYPES: Record<string, HfRepoType> = { models: 'model', datasets: 'dataset', spaces: 'space' };

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new Error(`'${s}' has a broken percent-escape`);
  }
};

/** Parses an hf:// or huggingface:// URI; throws an Error saying what is wrong. */
export function parseHfUri(uri: string): HfRef {
  const m = /^(hf|huggingface):\/\/(.*)$/i.exec(uri);
  if (!m) throw new Error(`'${uri}' is not an hf:// or huggingface:// URI`);
  const parts = m[2].split('/');
  const type = TYPES[parts[0]] && parts.length > 2 ? TYPES[parts.shift()!] : 'model';
  const [namespace, nameRev = '', ...rest] = parts;
  const at = nameRev.indexOf('@');
  const name = at < 0 ? nameRev : nameRev.slice(0, at);
  const revision = at < 0 ? 'main' : decode(nameRev.slice(at + 1));
  if (!PART.test(namespace ?? '') || !PART.test(name))
    throw new Error(
      `'${uri}' does not name a repository: expected hf://<namespace>/<name>[@<revision>][/<path>]`,
    );
  if (at >= 0 && !revision) throw new Error(`'${uri}' has an empty revision after '@'`);
  const path = rest.filter((p) => p !== '').map(decode);
  if (path.some((p) => p === '..' || p === '.'))
    throw new Error(`'${uri}': the path in the repository may not contain '.' or '..'`);
  return { type, repo: `${namespace}/${name}`, revision, path: path.join('/') };
}

/** the folder one repo at one revision is kept in, under the workspace's artifact cache */
export function hfCacheDir(workspaceDir: string, ref: HfRef): string {
  const h = createHash('sha256').update(`${ref.type}:${ref.repo}@${ref.revision}`).digest('hex').slice(0, 16);
  return join(workspaceDir, '.sflow_cache', 'artifacts', `hf_${h}`);
}

/** the artifact's path: the cache folder, or the file or folder the URI names inside it */
export function hfArtifactPath(workspaceDir: string, ref: HfRef): string {
  const dir = hfCacheDir(workspaceDir, ref);
  return ref.path ? join(dir, ...ref.path.split('/')) : dir;
}
