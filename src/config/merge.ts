/**
 * Multi-file composition (spec config.md §4.2, v0.3 rules): named entries are keyed by `name`
 * and deep-merged field by field; tasks likewise (first-seen order); leaves and value lists are
 * replaced by the later file, with an override warning; `version` must agree.
 */
import { SflowError, type SourceLocation } from '../util/sflow-error.js';
import { isPlainObject, TOP_COLLECTIONS } from './collections.js';
import { copyEntryOrigin, entryOrigin, getOrigin, setOrigin } from './source.js';
import type { ParsedFile } from './yaml-load.js';
import { basename } from 'node:path';

type Obj = Record<string, unknown>;

export interface MergeWarning {
  message: string;
  location?: SourceLocation;
}

export interface FileContribution {
  file: string;
  sections: { section: string; names: string[] }[];
}

export interface MergeResult {
  doc: Obj;
  warnings: MergeWarning[];
  contributions: FileContribution[];
}

const NAMED_PATHS = new Set([...TOP_COLLECTIONS, 'workflow.variables', 'workflow.tasks']);

export function mergeDocuments(files: ParsedFile[]): MergeResult {
  const warnings: MergeWarning[] = [];
  const contributions = files.map(contributionOf);
  let merged: Obj = {};
  setOrigin(merged, { entries: new Map() });
  let versionFrom: string | undefined;
  for (const f of files) {
    const doc = f.value;
    if ('version' in doc && doc.version !== null && doc.version !== undefined) {
      if ('version' in merged && merged.version !== doc.version) {
        throw new SflowError(
          'config.version_conflict',
          `Version conflict: '${String(merged.version)}' (from ${versionFrom}) vs '${String(doc.version)}' (from ${f.file})`,
          {
            location: entryOrigin(doc, 'version')?.value,
            hint: 'every file that sets `version` must use "0.1"',
          },
        );
      }
      versionFrom ??= f.file;
    }
    merged = mergeObjects(merged, doc, '', f.file, warnings);
  }
  return { doc: merged, warnings, contributions };
}

function mergeObjects(a: Obj, b: Obj, path: string, file: string, warnings: MergeWarning[]): Obj {
  const out: Obj = {};
  setOrigin(out, { self: getOrigin(a)?.self ?? getOrigin(b)?.self, entries: new Map() });
  for (const [k, v] of Object.entries(a)) {
    out[k] = v;
    copyEntryOrigin(out, k, a, k);
  }
  for (const [k, bv] of Object.entries(b)) {
    const sub = path ? `${path}.${k}` : k;
    if (bv === null || bv === undefined) {
      if (!(k in out)) {
        out[k] = bv;
        copyEntryOrigin(out, k, b, k);
      }
      continue;
    }
    if (!(k in out) || out[k] === null || out[k] === undefined) {
      out[k] = bv;
      copyEntryOrigin(out, k, b, k);
      continue;
    }
    const av = out[k];
    if (NAMED_PATHS.has(sub) && Array.isArray(av) && Array.isArray(bv)) {
      out[k] = mergeNamedLists(av, bv, sub, file, warnings);
      copyEntryOrigin(out, k, a, k);
    } else if (isPlainObject(av) && isPlainObject(bv)) {
      out[k] = mergeObjects(av, bv, sub, file, warnings);
      copyEntryOrigin(out, k, a, k);
    } else {
      if (!sameValue(av, bv)) {
        const prev = entryOrigin(a, k)?.value?.file;
        warnings.push({
          message: `${sub}: overridden by ${file}${prev ? ` (previously from ${prev})` : ''}, value: ${brief(av)} → ${brief(bv)}`,
          location: entryOrigin(b, k)?.value,
        });
      }
      out[k] = bv;
      copyEntryOrigin(out, k, b, k);
    }
  }
  return out;
}

function mergeNamedLists(
  a: unknown[],
  b: unknown[],
  section: string,
  file: string,
  warnings: MergeWarning[],
): unknown[] {
  const out = [...a];
  setOrigin(out, { self: getOrigin(a)?.self, entries: new Map() });
  a.forEach((_, i) => copyEntryOrigin(out, i, a, i));
  const index = new Map<string, number>();
  out.forEach((item, i) => {
    if (isPlainObject(item) && typeof item.name === 'string') index.set(item.name, i);
  });
  for (let j = 0; j < b.length; j++) {
    const item = b[j];
    const name = isPlainObject(item) && typeof item.name === 'string' ? item.name : undefined;
    const at = name === undefined ? undefined : index.get(name);
    if (at === undefined || !isPlainObject(item)) {
      if (name !== undefined) index.set(name, out.length);
      if (isPlainObject(item)) DEFINED_BY.set(item, file);
      copyEntryOrigin(out, out.length, b, j);
      out.push(item);
      continue;
    }
    const prevItem = out[at] as Obj;
    const prevFile =
      DEFINED_BY.get(prevItem) ?? getOrigin(prevItem)?.self?.file ?? entryOrigin(prevItem, 'name')?.key?.file;
    const local: MergeWarning[] = [];
    const merged = mergeObjects(prevItem, item, `${section}.${name}`, file, local);
    DEFINED_BY.set(merged, file);
    out[at] = merged;
    const label = `${section}.${name}`;
    // the compared value is `value` for variables and `uri` for artifacts (spec config.md §4.3)
    const main = section.endsWith('variables') ? 'value' : section === 'artifacts' ? 'uri' : undefined;
    if (local.length === 0) {
      // a later file that only adds fields extends the entry (v0.3 deep merge): nothing to warn about
      if (sameValue(prevItem, merged)) {
        warnings.push({
          message: `${label}: redefined by ${file} (same value as ${prevFile ?? 'an earlier file'})`,
          location: getOrigin(item)?.self,
        });
      }
    } else if (main && local.length === 1 && local[0].message.startsWith(`${label}.${main}:`)) {
      warnings.push({ ...local[0], message: local[0].message.replace(`${label}.${main}:`, `${label}:`) });
    } else {
      warnings.push(...local);
    }
  }
  return out;
}

/** which file last defined a merged named entry ("same value as FILE") */
const DEFINED_BY = new WeakMap<object, string>();

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function brief(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function namesOf(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isPlainObject).map((x) => String(x.name));
}

function contributionOf(f: ParsedFile): FileContribution {
  const doc = f.value;
  const wf = isPlainObject(doc.workflow) ? doc.workflow : {};
  const sections: FileContribution['sections'] = [];
  for (const s of TOP_COLLECTIONS) {
    const names = namesOf(doc[s]);
    if (names.length) sections.push({ section: s, names });
  }
  if (typeof wf.name === 'string') sections.push({ section: 'workflow.name', names: [wf.name] });
  if (wf.timeout !== undefined) sections.push({ section: 'workflow.timeout', names: [String(wf.timeout)] });
  for (const s of ['variables', 'tasks']) {
    const names = namesOf(wf[s]);
    if (names.length) sections.push({ section: `workflow.${s}`, names });
  }
  return { file: basename(f.file) === f.file ? f.file : f.file, sections };
}
