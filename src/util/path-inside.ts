import { isAbsolute, relative, sep } from 'node:path';

/**
 * `path` relative to `root` when it lies inside `root` ('' for `root` itself), else undefined.
 * A `..` segment leaves the folder; a name that merely starts with two dots (`..x.json`) does not.
 */
export function relativeInside(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  return rel.split(sep).includes('..') || isAbsolute(rel) ? undefined : rel;
}
