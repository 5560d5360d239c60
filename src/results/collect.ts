/**
 * `sflow results collect`: run folders, output roots and `s3://` prefixes → the collected table
 * (store.ts). Only runs that are new or changed since the last collect are read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findRunFolders, type FoundRun } from './local-source.js';
import { NotARunError, runRows, type RunFiles } from './run-rows.js';
import type { Row } from './row.js';
import { s3Runs } from './s3-source.js';
import { readState, STORE_FILES, updateStore } from './store.js';

export interface CollectReport {
  found: number;
  read: number;
  rows: number;
  total: number;
  skipped: string[];
  missing: string[];
}

export interface CollectOptions {
  out: string;
  env?: NodeJS.ProcessEnv;
  progress?: (line: string) => void;
}

function rowsOf(files: RunFiles, skipped: string[]): Row[] {
  try {
    return runRows(files);
  } catch (e) {
    if (e instanceof NotARunError) {
      skipped.push(e.message);
      return [];
    }
    throw e;
  }
}

/** Rows of the given sources, with no store (for `diff`/`compare` over run folders directly). */
export async function rowsFromSources(
  sources: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Row[]> {
  const rows: Row[] = [];
  const skipped: string[] = [];
  const local = sources.filter((s) => !s.startsWith('s3://'));
  for (const r of findRunFolders(local).runs) rows.push(...rowsOf(r.files(), skipped));
  for (const uri of sources.filter((s) => s.startsWith('s3://'))) {
    const s3 = await s3Runs(uri, env);
    try {
      for (const f of (await s3.fetch(s3.runs)).values()) rows.push(...rowsOf(f, skipped));
    } finally {
      s3.close();
    }
  }
  return rows;
}

export async function collect(sources: string[], o: CollectOptions): Promise<CollectReport> {
  const out = resolve(o.out);
  const state = readState(out);
  const complete = existsSync(join(out, STORE_FILES.parquet)) && existsSync(join(out, STORE_FILES.jsonl));
  const isNew = (r: FoundRun) => !complete || state.runs[r.key] !== r.fingerprint;
  const fresh = new Map<string, Row[]>();
  const fingerprints = new Map<string, string>();
  const skipped: string[] = [];
  const local = findRunFolders(sources.filter((s) => !s.startsWith('s3://')));
  let found = local.runs.length;
  const todo = local.runs.filter(isNew);
  if (todo.length) o.progress?.(`reading ${todo.length} of ${local.runs.length} run folders`);
  for (const r of todo) {
    fresh.set(r.key, rowsOf(r.files(), skipped));
    fingerprints.set(r.key, r.fingerprint);
  }
  for (const uri of sources.filter((s) => s.startsWith('s3://'))) {
    const s3 = await s3Runs(uri, o.env ?? process.env);
    try {
      found += s3.runs.length;
      const wanted = s3.runs.filter(isNew);
      if (wanted.length)
        o.progress?.(`fetching ${wanted.length} of ${s3.runs.length} run archives from ${uri}`);
      const files = await s3.fetch(wanted);
      for (const r of wanted) {
        fresh.set(r.key, rowsOf(files.get(r.key)!, skipped));
        fingerprints.set(r.key, r.fingerprint);
      }
    } finally {
      s3.close();
    }
  }
  const rows = [...fresh.values()].reduce((n, l) => n + l.length, 0);
  const total = fresh.size ? await updateStore(out, { fresh, fingerprints }) : countRows(out);
  return { found, read: fresh.size, rows, total, skipped, missing: local.missing };
}

function countRows(dir: string): number {
  try {
    return Object.keys(readState(dir).runs).length ? linesOf(join(dir, STORE_FILES.jsonl)) : 0;
  } catch {
    return 0;
  }
}

function linesOf(path: string): number {
  const text = readFileSync(path, 'utf8');
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
