/**
 * Creating a directory and its missing parents, one level at a time. Node's
 * `mkdirSync(p, {recursive: true})` loops forever (at full CPU) when the kernel answers ENOENT for
 * a parent that exists, as under /proc; here every path component is tried once, so a folder
 * that cannot be made is a clear error naming it, never a hang.
 */
import { mkdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SflowError, type ErrorPhase } from '../util/sflow-error.js';
import { errorCode, errorMessage } from '../util/errors.js';

export interface EnsureDirOptions {
  /** what the folder is for, in the error message (default "folder") */
  what?: string;
  phase?: ErrorPhase;
  hint?: string;
}

function kind(p: string): 'dir' | 'other' | 'missing' {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

/** Makes `path` (and missing parents); returns the folders it created, outermost first. */
export function ensureDir(path: string, opts: EnsureDirOptions = {}): string[] {
  const target = resolve(path);
  const what = opts.what ?? 'folder';
  const fail = (why: string, hint?: string): never => {
    throw new SflowError('fs.mkdir', `cannot create the ${what} ${target}: ${why}`, {
      phase: opts.phase ?? 'usage',
      hint: hint ?? opts.hint ?? 'choose a writable location',
    });
  };
  const missing: string[] = [];
  let p = target;
  for (;;) {
    const k = kind(p);
    if (k === 'dir') break;
    if (k === 'other') fail(`${p} exists and is not a folder`);
    missing.push(p);
    const parent = dirname(p);
    if (parent === p) fail(`the file system root ${p} is missing`);
    p = parent;
  }
  const created: string[] = [];
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
      created.push(d);
    } catch (e) {
      const code = errorCode(e);
      if (code === 'EEXIST' && kind(d) === 'dir') continue;
      removeCreated(created);
      const detail =
        code === 'ENOENT'
          ? `the file system at ${dirname(d)} does not allow creating folders there (ENOENT)`
          : `${code ?? 'error'}: ${errorMessage(e)}`;
      fail(detail);
    }
  }
  return created;
}

/** Undo `ensureDir`: removes the folders it created (innermost first) when they are still empty. */
export function removeCreated(created: string[]): void {
  for (const d of [...created].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      /* not empty, or gone */
    }
  }
}
