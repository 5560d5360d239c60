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
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    const origin = getOrigin(cur);
    const entry = origin?.entries.get(seg);
    if (origin?.self) best = origin.self;
    if (entry) {
      const last = i === path.length - 1;
      best = (last && atKey ? (entry.key ?? entry.value) : (entry.value ?? entry.key)) ?? best;
    }
    if (cur === null || typeof cur !== 'object') break;
    const next: unknown = (cur as Record<PathSeg, unknown>)[seg];
    if (next === undefined) break;
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
