/**
 * The shipped samples (`assets/samples/`): single recipes under `self_contained/<backend>/`
 * and modular folders (backend / workload / benchmark fragments) under `modular/`. A sample's
 * one-line description is the first comment line of its YAML, or the title of its folder's
 * README.md.
 */
import { assetExists, listAssetFiles, readAsset } from '../config/assets.js';

export interface Sample {
  /** `self_contained/local/dag`, `modular/llm_disagg` */
  name: string;
  /** `self_contained/local`, `modular` */
  category: string;
  description: string;
  /** a folder copied whole (modular) or one YAML file */
  kind: 'file' | 'folder';
  /** the files it consists of, relative to `assets/samples/<name>` (folder) or the file itself */
  files: string[];
}

const ROOT = 'samples';

function firstComment(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '');
  return line?.startsWith('#') ? line.replace(/^#+\s*/, '').trim() : '';
}

export function listSamples(): Sample[] {
  if (!assetExists(ROOT)) return [];
  const files = listAssetFiles(ROOT);
  const out: Sample[] = [];
  const folders = new Map<string, string[]>();
  for (const f of files) {
    const parts = f.split('/');
    if (parts[0] === 'modular' && parts.length > 2) {
      const name = parts.slice(0, 2).join('/');
      folders.set(name, [...(folders.get(name) ?? []), parts.slice(2).join('/')]);
    } else if (/\.ya?ml$/.test(f)) {
      out.push({
        name: f.replace(/\.ya?ml$/, ''),
        category: parts.slice(0, -1).join('/'),
        description: firstComment(readAsset(`${ROOT}/${f}`)),
        kind: 'file',
        files: [f],
      });
    }
  }
  for (const [name, list] of folders) {
    const readme = list.includes('README.md') ? readAsset(`${ROOT}/${name}/README.md`) : '';
    out.push({ name, category: 'modular', description: firstComment(readme), kind: 'folder', files: list });
  }
  return out.sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name));
}

const CATEGORY_ORDER = ['local', 'slurm', 'docker', 'kubernetes', 'modular'];
function order(s: Sample): number {
  const i = CATEGORY_ORDER.findIndex((c) => s.category.endsWith(c));
  return i < 0 ? CATEGORY_ORDER.length : i;
}

export type Lookup = { sample: Sample } | { candidates: Sample[] };

/**
 * A sample by its full name, or by any unambiguous tail of it (`local/dag`, `dag`);
 * `.yaml` and a trailing `/` are ignored.
 */
export function findSample(query: string, samples = listSamples()): Lookup {
  const q = query.replace(/\.ya?ml$/, '').replace(/\/+$/, '');
  const exact = samples.find((s) => s.name === q);
  if (exact) return { sample: exact };
  const tail = samples.filter((s) => s.name.endsWith(`/${q}`));
  if (tail.length === 1) return { sample: tail[0] };
  return { candidates: tail };
}

/** The text of one file of a sample (`rel` as listed in `files`). */
export function readSampleFile(sample: Sample, rel: string): string {
  return readAsset(sample.kind === 'folder' ? `${ROOT}/${sample.name}/${rel}` : `${ROOT}/${rel}`);
}
