/**
 * Source positions for values parsed from YAML. Every mapping/sequence produced by the loader is
 * registered here with the position of each of its keys and values, so that any later stage
 * (merge, schema validation, planning) can turn a document path into `file:line:col`.
 * Containers built by merging copy the entries of the containers they came from.
 */
import type { SourceLocation } from './errors.js';

export type PathSeg = string | number;

export interface EntryOrigin {
  key?: SourceLocation;
  value?: SourceLocation;
  /** the YAML scalar was written as a float (e.g. `3.0`), which JS numbers cannot tell apart */
  float?: boolean;
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
    const next: unknown = cur !== null && typeof cur === 'object' ? (cur as Record<PathSeg, unknown>)[seg] : undefined;
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
