/**
 * Artifacts → paths (spec artifacts-batch.md A2–A3, config.md §1.6). Pure: nothing is created,
 * downloaded or checked here; preflight.ts checks fs:// paths and the runtime materialises
 * inline content. http(s):// and hf:// name their place in the workspace's cache (downloaded
 * at run start), docker:// its image reference (made present on the engines at run start).
 */
import { createHash } from 'node:crypto';
import { isAbsolute, join, normalize, resolve } from 'node:path';
import { relativeInside } from '../util/path-inside.js';
import type { Scope } from '../config/expr/index.js';
import type { PlannedArtifact } from './types.js';
import { planError, renderField, type Where } from '../config/resolve.js';
import { errorMessage } from '../util/errors.js';
import { hfArtifactPath, parseHfUri, type HfRef } from './hf-ref.js';

/** the scheme of image artifacts (`docker://`; an artifact scheme, not the backend type) */
export const IMAGE_SCHEME = 'docker';

/** `docker://<image ref>` → the image reference (what `image:` takes) */
export const dockerImageRef = (uri: string): string => uri.replace(/^docker:\/\//i, '');

export function artifactScheme(uri: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(uri);
  return m ? m[1].toLowerCase() : '';
}

/** Path text of an fs:// or file:// URI: authority + path, percent-decoded; `file://localhost/x` → `/x`. */
export function uriPathText(uri: string): string {
  let rest = uri.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
  if (rest.startsWith('localhost/')) rest = rest.slice('localhost'.length);
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

export function planArtifact(
  item: { name: string; uri: string; content?: string | null },
  scope: Scope,
  where: Where,
  dirs: { workspaceDir: string; runDir: string },
): PlannedArtifact {
  const uri = renderField(item.uri, scope, { doc: where.doc, path: [...where.path, 'uri'] });
  const scheme = artifactScheme(uri);
  if (!scheme) {
    throw planError(
      where,
      'plan.artifact_scheme',
      `Artifact '${item.name}' URI must have a scheme (e.g. fs://, file://, https://), got '${uri}'`,
    );
  }
  const content =
    item.content === undefined || item.content === null
      ? undefined
      : renderField(item.content, scope, { doc: where.doc, path: [...where.path, 'content'] });
  let path: string;
  if (scheme === 'fs' || scheme === 'file') {
    const text = uriPathText(uri);
    if (scheme === 'file' && content !== undefined && !isAbsolute(text)) {
      path = resolve(dirs.runDir, normalize(text));
      if (relativeInside(dirs.runDir, path) === undefined) {
        throw planError(
          { doc: where.doc, path: [...where.path, 'uri'] },
          'plan.artifact_escape',
          `Artifact '${item.name}': inline file '${text}' escapes the run directory`,
          'relative file:// paths with content are written inside the run directory; use a path without ".." or an absolute path',
        );
      }
    } else {
      path = isAbsolute(text) ? normalize(text) : resolve(dirs.workspaceDir, text);
    }
  } else if (scheme === 'hf' || scheme === 'huggingface') {
    let ref: HfRef;
    try {
      ref = parseHfUri(uri);
    } catch (e) {
      throw planError(
        { doc: where.doc, path: [...where.path, 'uri'] },
        'plan.artifact_hf',
        `Artifact '${item.name}': ${errorMessage(e)}`,
        'e.g. hf://Qwen/Qwen3-0.6B, hf://org/model@v1.0/config.json, hf://datasets/org/data',
      );
    }
    path = hfArtifactPath(dirs.workspaceDir, ref);
  } else if (scheme === IMAGE_SCHEME) {
    path = dockerImageRef(uri);
    if (!/^[A-Za-z0-9][\w.:/@-]*$/.test(path))
      throw planError(
        { doc: where.doc, path: [...where.path, 'uri'] },
        'plan.artifact_docker',
        `Artifact '${item.name}': '${uri}' does not name an image`,
        'e.g. docker://nvcr.io/nvidia/pytorch:24.05-py3 or docker://busybox@sha256:…',
      );
  } else if (scheme === 'http' || scheme === 'https') {
    const h = createHash('sha256').update(uri).digest('hex').slice(0, 16);
    path = join(dirs.workspaceDir, '.sflow_cache', 'artifacts', `http_${h}`);
  } else {
    path = uri;
  }
  return { name: item.name, uri, scheme, path, ...(content !== undefined ? { content } : {}) };
}

export function artifactsNamespace(arts: PlannedArtifact[]): Record<string, { uri: string; path: string }> {
  const ns = Object.create(null) as Record<string, { uri: string; path: string }>;
  for (const a of arts) ns[a.name] = { uri: a.uri, path: a.path };
  return ns;
}
