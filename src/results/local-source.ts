/**
 * Run folders on disk: each path given is a run folder (it has `events.jsonl`) or a folder to
 * search for them (an output root, recursively, not descending into a run folder, hidden folders
 * or links). A run's fingerprint is the size and change time of its ledger and `results.json`:
 * a run that did not change since the last collect is not read again.
 */
import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { RunFiles } from './run-rows.js';

export interface FoundRun {
  /** identity in the collected table's state: the folder, absolute */
  key: string;
  fingerprint: string;
  files: () => RunFiles;
}

const MAX_DEPTH = 8;

function stamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${Math.round(s.mtimeMs)}`;
  } catch {
    return '-';
  }
}

export function folderFiles(dir: string): RunFiles {
  return {
    location: dir,
    read(rel) {
      try {
        return readFileSync(join(dir, rel), 'utf8');
      } catch {
        return undefined;
      }
    },
    list(sub) {
      const out: string[] = [];
      const walk = (d: string, depth: number) => {
        let entries: Dirent[];
        try {
          entries = readdirSync(d, { withFileTypes: true });
        } catch {
          return;
        }
        for (const e of entries) {
          const p = join(d, e.name);
          if (e.isDirectory() && depth < MAX_DEPTH) walk(p, depth + 1);
          else if (e.isFile()) out.push(relative(dir, p).split(sep).join('/'));
        }
      };
      walk(join(dir, sub), 0);
      return out;
    },
  };
}

/** Every run folder at or under `paths`; a path that does not exist is reported in `missing`. */
export function findRunFolders(paths: string[]): { runs: FoundRun[]; missing: string[] } {
  const runs: FoundRun[] = [];
  const missing: string[] = [];
  const seen = new Set<string>();
  const visit = (dir: string, depth: number) => {
    if (existsSync(join(dir, 'events.jsonl'))) {
      if (seen.has(dir)) return;
      seen.add(dir);
      runs.push({
        key: dir,
        fingerprint: `${stamp(join(dir, 'events.jsonl'))}/${stamp(join(dir, 'results.json'))}`,
        files: () => folderFiles(dir),
      });
      return;
    }
    if (depth >= MAX_DEPTH) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name)))
      if (e.isDirectory() && !e.name.startsWith('.')) visit(join(dir, e.name), depth + 1);
  };
  for (const p of paths) {
    const abs = resolve(p);
    if (!existsSync(abs)) missing.push(p);
    else visit(abs, 0);
  }
  return { runs, missing };
}
