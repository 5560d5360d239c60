/**
 * `from` of an upload → the regular files it names: a plain path, a folder (every regular file
 * below it, named by its path relative to the folder; links to folders are not walked), or a glob
 * with `*`, `?`, `[…]` inside a path segment and `**` for any number of directories. Matches are
 * sorted; the walks are bounded (MAX_ENTRIES) so a huge tree cannot stall the run.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isGlob } from '../plan/uploads.js';

const MAX_ENTRIES = 200_000;

function segmentRegex(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      // as in the shell: `[!…]` negates, and a `]` first in the set (after `[` or `[!`) is one of its characters
      const negated = seg[i + 1] === '!';
      const first = i + (negated ? 2 : 1);
      const end = seg.indexOf(']', first + 1);
      if (end < 0) re += '\\[';
      else {
        const body = seg.slice(first, end).replace(/[\\\]]/g, '\\$&');
        re += `[${negated ? '^' : ''}${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export interface ExpandOptions {
  /**
   * false: a file whose real path (links followed) is outside the folder the pattern names — the
   * part before its first glob segment, or a plain path's own folder — is left out and listed in
   * `outside` (a task may leave a link to /etc in its folder). Default true.
   */
  followSymlinks?: boolean;
  outside?: string[];
}

/** the folder `abs` names: the part before its first glob segment, or a plain path's folder */
export function fromRoot(abs: string): string {
  if (!isGlob(abs)) return dirname(abs);
  const segs = abs.split(sep);
  return (
    segs
      .slice(
        0,
        segs.findIndex((s) => isGlob(s)),
      )
      .join(sep) || sep
  );
}

/** Absolute paths of the regular files `pattern` names (relative patterns resolve against `base`). */
export function expandFrom(pattern: string, base: string, o: ExpandOptions = {}): string[] {
  const abs = isAbsolute(pattern) ? pattern : resolve(base, pattern);
  const found = expandAll(abs, pattern);
  if (o.followSymlinks !== false) return found;
  let root: string;
  try {
    root = realpathSync(fromRoot(abs));
  } catch {
    return [];
  }
  return found.filter((f) => {
    let real: string;
    try {
      real = realpathSync(f);
    } catch {
      return false;
    }
    const inside = real === root || real.startsWith(root === sep ? root : root + sep);
    if (!inside) o.outside?.push(f);
    return inside;
  });
}

function expandAll(abs: string, pattern: string): string[] {
  if (!isGlob(abs)) return isFile(abs) ? [abs] : [];
  const segs = abs.split(sep);
  const first = segs.findIndex((s) => isGlob(s));
  const root = segs.slice(0, first).join(sep) || sep;
  const rest = segs.slice(first);
  const out = new Set<string>();
  let seen = 0;
  const walk = (dir: string, i: number): void => {
    if (seen > MAX_ENTRIES) throw new Error(`the glob ${pattern} walks more than ${MAX_ENTRIES} entries`);
    if (i === rest.length) {
      if (isFile(dir)) out.add(dir);
      return;
    }
    const seg = rest[i];
    if (seg === '**') {
      walk(dir, i + 1); // zero directories
      for (const e of list(dir)) if (e.isDirectory()) walk(join(dir, e.name), i);
      return;
    }
    if (!isGlob(seg)) return walk(join(dir, seg), i + 1);
    const re = segmentRegex(seg);
    for (const e of list(dir)) if (re.test(e.name)) walk(join(dir, e.name), i + 1);
  };
  const list = (dir: string) => {
    try {
      const entries = readdirSync(dir, { withFileTypes: true });
      seen += entries.length;
      return entries;
    } catch {
      return [];
    }
  };
  walk(root, 0);
  return [...out].sort();
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** One file an upload sends: where it is, and its name below `to` (a folder's files: their relative path). */
export interface UploadSource {
  path: string;
  name: string;
}

/**
 * The files an upload's `from` names, and whether it named a folder (whose files keep their paths
 * relative to it, with `/` separators). A folder's links to files are taken like a glob's: with
 * `followSymlinks: false` only those whose target is inside the folder (the others are listed in
 * `outside`); links to folders are never walked (they could loop).
 */
export function uploadSources(
  pattern: string,
  base: string,
  o: ExpandOptions = {},
): { files: UploadSource[]; folder: boolean } {
  const abs = isAbsolute(pattern) ? pattern : resolve(base, pattern);
  if (isGlob(abs) || !isDirectory(abs))
    return {
      files: expandFrom(pattern, base, o).map((p) => ({ path: p, name: basename(p) })),
      folder: false,
    };
  let root: string;
  try {
    root = realpathSync(abs);
  } catch {
    return { files: [], folder: true };
  }
  const inside = (p: string): boolean => {
    try {
      const real = realpathSync(p);
      return real.startsWith(root === sep ? root : root + sep);
    } catch {
      return false;
    }
  };
  const out: UploadSource[] = [];
  let seen = 0;
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    seen += entries.length;
    if (seen > MAX_ENTRIES) throw new Error(`the folder ${pattern} holds more than ${MAX_ENTRIES} entries`);
    for (const e of entries) {
      const p = join(dir, e.name);
      const item = { path: p, name: relative(abs, p).split(sep).join('/') };
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && lstatSync(p).isFile()) out.push(item);
      else if (e.isSymbolicLink() && isFile(p)) {
        if (o.followSymlinks !== false || inside(p)) out.push(item);
        else o.outside?.push(p);
      }
    }
  };
  walk(abs);
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { files: out, folder: true };
}
