/**
 * `file://` artifacts on Kubernetes (backends.md §5.4): pods do not see the driver's files, so
 * the run's file artifacts (inline content the driver wrote at run start, or an existing local
 * file) go into one ConfigMap, `sf-art-<run>`, made on the first launch, and every task pod mounts
 * each one at its own path (subPath). A ConfigMap holds at most ~1 MiB: a file that does not fit
 * is left out with a warning (ship it on a volume instead).
 */
import { readFileSync, statSync } from 'node:fs';
import type { PlannedArtifact } from '../../plan/types.js';
import { artifactsName, type RunNames } from './names.js';
import type { PodPlan } from './pod-manifest.js';
import { objectMeta, type K8sRun } from './run-context.js';
import { createObject } from './task-pods.js';

const LIMIT = 1000 * 1024;

/** the run's `file://` artifacts with their key in the ConfigMap (launch and --dry-run agree on it) */
export function fileArtifactKeys(artifacts: PlannedArtifact[]): Array<{ a: PlannedArtifact; key: string }> {
  return artifacts
    .filter((a) => a.scheme === 'file')
    .map((a, i) => ({ a, key: `a${i}-${a.name.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 253) }));
}

/** The artifacts ConfigMap as `--dry-run` shows it: every file:// artifact (inline content exists once the run starts). */
export function plannedArtifacts(r: { run: RunNames }, artifacts: PlannedArtifact[]): PodPlan['artifacts'] {
  const files = fileArtifactKeys(artifacts).map(({ a, key }) => ({ key, path: a.path }));
  return files.length ? { configMap: artifactsName(r.run), files } : undefined;
}

export async function shipArtifacts(
  r: K8sRun,
  artifacts: PlannedArtifact[],
  signal: AbortSignal,
): Promise<PodPlan['artifacts']> {
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  const files: Array<{ key: string; path: string }> = [];
  let size = 0;
  fileArtifactKeys(artifacts).forEach(({ a, key }) => {
    let buf: Buffer;
    try {
      if (!statSync(a.path).isFile()) return;
      buf = readFileSync(a.path);
    } catch {
      return;
    }
    if (size + buf.length > LIMIT) {
      r.log(
        `artifact '${a.name}' (${buf.length} bytes) does not fit the run's artifacts ConfigMap (1 MiB in all): pods will not see ${a.path}; put it on a volume`,
      );
      return;
    }
    size += buf.length;
    const text = buf.toString('utf8');
    if (Buffer.from(text, 'utf8').equals(buf)) data[key] = text;
    else binaryData[key] = buf.toString('base64');
    files.push({ key, path: a.path });
  });
  if (!files.length) return undefined;
  const name = artifactsName(r.run);
  await createObject(
    r.api,
    'configmaps',
    {
      metadata: objectMeta(r, name, 'task'),
      ...(Object.keys(data).length ? { data } : {}),
      ...(Object.keys(binaryData).length ? { binaryData } : {}),
    },
    signal,
  );
  return { configMap: name, files };
}
