/**
 * The shipped samples (`assets/samples/`): single recipes under `self_contained/<backend>/`
 * and modular folders (backend / workload / benchmark fragments) under `modular/`. A sample's
 * one-line description is the first comment line of its YAML, or the title of its folder's
 * README.md; that line also identifies a copied sample (`sampleOfHeadline`). Its family (what
 * it is about, for the grouped list) follows from its name.
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
  family: Family;
}

export const FAMILIES = ['basics', 'storage', 'gpus', 'serving'] as const;
export type Family = (typeof FAMILIES)[number];

/** what a sample is about, from its name: LLM serving, GPU placement/monitoring, uploads, or the basics */
export function familyOf(name: string): Family {
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (/dynamo|vllm|sglang|trtllm|backend_agnostic|llm_/.test(base)) return 'serving';
  if (/gpu|monitor/.test(base)) return 'gpus';
  if (/storage|upload/.test(base)) return 'storage';
  return 'basics';
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
      const name = f.replace(/\.ya?ml$/, '');
      out.push({
        name,
        category: parts.slice(0, -1).join('/'),
        description: firstComment(readAsset(`${ROOT}/${f}`)),
        kind: 'file',
        files: [f],
        family: familyOf(name),
      });
    }
  }
  for (const [name, list] of folders) {
    const readme = list.includes('README.md') ? readAsset(`${ROOT}/${name}/README.md`) : '';
    out.push({
      name,
      category: 'modular',
      description: firstComment(readme),
      kind: 'folder',
      files: list,
      family: familyOf(name),
    });
  }
  return out.sort(
    (a, b) =>
      order(a) - order(b) ||
      FAMILIES.indexOf(a.family) - FAMILIES.indexOf(b.family) ||
      a.name.localeCompare(b.name),
  );
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

/**
 * The single-file sample a copied file came from, by its first line (each sample's first line,
 * its title comment, is its own: a catalogue test keeps them distinct); undefined for other text.
 */
export function sampleOfHeadline(text: string, samples = listSamples()): Sample | undefined {
  const first = text
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim();
  if (!first?.startsWith('#')) return undefined;
  return samples.find(
    (s) => s.kind === 'file' && readSampleFile(s, s.files[0]).split('\n')[0].trim() === first,
  );
}

/** The text of one file of a sample (`rel` as listed in `files`). */
export function readSampleFile(sample: Sample, rel: string): string {
  return readAsset(sample.kind === 'folder' ? `${ROOT}/${sample.name}/${rel}` : `${ROOT}/${rel}`);
}
