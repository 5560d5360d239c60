/**
 * Source positions for values parsed from YAML. Every mapping/sequence produced by the loader is
 * registered here with the position of each of its keys and values, so that any later stage
 * (merge, schema validation, planning) can turn a document path into `file:line:col`.
 * Containers built by merging copy the entries of the containers they came from.
 */
import type { SourceLocation } from '../util/sflow-error.js';

export type PathSeg = string | number;

export interface EntryOrigin {
  key?: SourceLocation;
  value?: SourceLocation;
  /** the YAML scalar was written as a float (e.g. `3.0`), which JS numbers cannot tell apart */
  float?: boolean;
  /**
   * where character 0 of a string value sits in the file, set only where the characters map
   * one to one onto the source (single-line plain scalars, literal `|` blocks: every line at the
   * block's indentation), so an offset inside the string can be located exactly
   */
  text?: SourceLocation;
}

/** The file position of character `offset` of `value`, when its entry records where the text starts. */
export function locateInText(
  entry: EntryOrigin | undefined,
  value: string,
  offset: number,
): SourceLocation | undefined {
  const t = entry?.text;
  if (!t) return undefined;
  const before = value.slice(0, Math.max(0, Math.min(offset, value.length)));
  const nl = before.lastIndexOf('\n');
  const lines = nl < 0 ? 0 : before.split('\n').length - 1;
  return {
    file: t.file,
    line: t.line + lines,
    col: t.col + (nl < 0 ? before.length : before.length - nl - 1),
  };
}

export interface Origin {
  self?: SourceLocation;
  entries: Map<PathSeg, EntryOrigin>;
}

const ORIGINS = new WeakMap<object, Origin>();

export function setOrigin(container: object, origin: Origin): void {
  ORIGINS.set(container, origin);
}

export function getOrigin(container: unknown): Origin | undefined {
  return container !== null && typeof container === 'object' ? ORIGINS.get(container) : undefined;
}

export function entryOrigin(container: unknown, key: PathSeg): EntryOrigin | undefined {
  return getOrigin(container)?.entries.get(key);
}

/** Register `target` as carrying the entry `key` from `source[sourceKey]`'s origin. */
export function copyEntryOrigin(target: object, key: PathSeg, source: unknown, sourceKey: PathSeg): void {
  const from = entryOrigin(source, sourceKey);
  if (!from) return;
  let o = ORIGINS.get(target);
  if (!o) {
    o = { self: getOrigin(source)?.self, entries: new Map() };
    ORIGINS.set(target, o);
  }
  o.entries.set(key, from);
}

export function isYamlFloat(container: unknown, key: PathSeg): boolean {
  return entryOrigin(container, key)?.float === true;
}

/**
 * Best location for `path` inside `root`: the position of the deepest entry that exists.
 * With `atKey`, the last segment's key position is preferred (unknown-key errors).
 */
export function locate(root: unknown, path: readonly PathSeg[], atKey = false): SourceLocation | undefined {
  let cur: unknown = root;
  let best: SourceLocation | undefined = getOrigin(root)?.self;
  /** the entry (in its parent) of the container we are in: a missing key points at it */
  let containerEntry: EntryOrigin | undefined;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    const last = i === path.length - 1;
    // a single item written where a list is accepted (normalised to a list later): `[0]` is the item itself
    if (seg === 0 && cur !== null && typeof cur === 'object' && !Array.isArray(cur)) continue;
    const origin = getOrigin(cur);
    if (origin?.self) best = origin.self;
    const entry = origin?.entries.get(seg);
    const next: unknown =
      cur !== null && typeof cur === 'object' ? (cur as Record<PathSeg, unknown>)[seg] : undefined;
    if (!entry || next === undefined) {
      // the key is absent: point at the key of the container that lacks it
      return containerEntry?.key ?? best;
    }
    const isContainer = next !== null && typeof next === 'object';
    if (last) return (atKey || isContainer ? (entry.key ?? entry.value) : (entry.value ?? entry.key)) ?? best;
    best = entry.value ?? entry.key ?? best;
    containerEntry = entry;
    cur = next;
  }
  return best;
}

/** `workflow.tasks[0].script[2]` */
export function formatPath(path: readonly PathSeg[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}
