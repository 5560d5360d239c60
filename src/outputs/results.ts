/**
 * `result:` → `<task dir>/result.json` (config.md 1.15, 5.11). Regex patterns run over the
 * task log line by line, streaming (logs may be 1 GB); `file:` mode reads a JSON file the
 * task wrote. Best effort: a problem sets `ok: false` / adds an error, never throws.
 */
import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { relativeInside } from '../util/path-inside.js';
import type { PlannedResult, PlannedResultPattern, PlannedTask } from '../plan/types.js';
import { castValue, truncate, type CastValue } from './cast.js';
import { forEachLine } from './line-reader.js';
import { compilePyRegex } from './pyregex.js';
import { execEachLine, RegexTimeoutError } from '../util/guarded-regex.js';
import { PatternAggregate, type MatchTrace } from './result-aggregate.js';
import { toPlain, writeJsonAtomic } from './json-write.js';
import { errorCode, errorMessage } from '../util/errors.js';

export const RESULT_SCHEMA = 'sflow.result.v1';

export interface TaskResultDoc {
  schema_version: string;
  task: string;
  status: 'COMPLETED';
  ok: boolean;
  source: { type: 'log' | 'file'; path: string };
  values: Record<string, unknown>;
  metadata: Record<string, { unit: string | null; type: string; aggregate: string }>;
  matches: Record<string, MatchTrace[]>;
  errors: string[];
}

export interface ParsedResult {
  doc: TaskResultDoc;
  /** where result.json was written (undefined if writing failed) */
  path: string | undefined;
  /** plain JSON values (floats as numbers) for events and the run index */
  values: Record<string, unknown>;
}

interface Compiled {
  spec: PlannedResultPattern;
  re: RegExp;
  agg: PatternAggregate;
}

/** Which capture a match contributes: explicit group, else `value`, else group 1, else all. */
export function pickGroup(m: RegExpExecArray, spec: PlannedResultPattern): string | undefined {
  if (spec.group !== undefined && spec.group !== null && spec.group !== '') {
    const g =
      typeof spec.group === 'number' || /^\d+$/.test(String(spec.group))
        ? m[Number(spec.group)]
        : m.groups?.[spec.group];
    return g;
  }
  if (m.groups && 'value' in m.groups) return m.groups.value;
  if (m.length > 1) return m[1];
  return m[0];
}

function checkGroup(re: RegExp, spec: PlannedResultPattern): string | undefined {
  if (spec.group === undefined || spec.group === null || spec.group === '') return undefined;
  const probe = new RegExp(`${re.source}|`, re.flags).exec(''); // counts the groups of `re`
  const n = probe ? probe.length - 1 : 0;
  if (typeof spec.group === 'number' || /^\d+$/.test(String(spec.group))) {
    return Number(spec.group) <= n ? undefined : `${spec.name}: regex has no group ${spec.group}`;
  }
  return probe?.groups && spec.group in probe.groups
    ? undefined
    : `${spec.name}: regex has no group named '${spec.group}'`;
}

export async function parseLogResult(
  patterns: PlannedResultPattern[],
  logPath: string,
): Promise<{ values: Record<string, CastValue>; matches: Record<string, MatchTrace[]>; errors: string[] }> {
  const errors: string[] = [];
  const compiled: Compiled[] = [];
  for (const spec of patterns) {
    try {
      const re = compilePyRegex(spec.regex);
      const bad = checkGroup(re, spec);
      if (bad) errors.push(bad);
      else compiled.push({ spec, re, agg: new PatternAggregate(spec) });
    } catch (e) {
      errors.push(`${spec.name}: ${errorMessage(e)}`);
    }
  }
  const castErrors = new Map<string, number>();
  const take = (c: Compiled, m: RegExpExecArray, line: string, lineNo: number): void => {
    const text = pickGroup(m, c.spec);
    if (text === undefined) return;
    const cast = castValue(text, c.spec.type);
    if (cast.ok) c.agg.add(cast.value, lineNo, line);
    else if (!castErrors.has(c.spec.name)) {
      castErrors.set(c.spec.name, lineNo);
      errors.push(`${c.spec.name}: line ${lineNo}: ${cast.error}`);
    }
  };
  // lines are matched in batches, each pattern under a deadline (util/guarded-regex.ts)
  let batch: string[] = [];
  let firstNo = 1;
  let batchChars = 0;
  const timedOut = new Set<Compiled>();
  const flush = (): void => {
    const hits: [number, number, RegExpExecArray][] = [];
    compiled.forEach((c, ci) => {
      if (timedOut.has(c)) return;
      try {
        for (const [i, m] of execEachLine(c.re, batch)) hits.push([i, ci, m]);
      } catch (e) {
        if (!(e instanceof RegexTimeoutError)) throw e;
        timedOut.add(c);
        errors.push(`${c.spec.name}: ${e.message}`);
      }
    });
    hits.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // line order, then pattern order
    for (const [i, ci, m] of hits) take(compiled[ci], m, batch[i], firstNo + i);
    firstNo += batch.length;
    batch = [];
    batchChars = 0;
  };
  if (compiled.length > 0) {
    try {
      await forEachLine(logPath, (line) => {
        batch.push(line);
        batchChars += line.length;
        if (batch.length >= 4096 || batchChars >= 1 << 20) flush();
      });
      flush();
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') errors.push(`cannot read log: ${errorMessage(e)}`);
      return { values: {}, matches: {}, errors }; // a missing log: empty values
    }
  }
  const values: Record<string, CastValue> = {};
  const matches: Record<string, MatchTrace[]> = {};
  for (const c of compiled) {
    const r = c.agg.result();
    if (c.agg.count > 0) matches[c.spec.name] = c.agg.trace();
    if (r === undefined) {
      if (c.spec.required && !castErrors.has(c.spec.name))
        errors.push(`${c.spec.name}: required pattern did not match`);
      else if (c.spec.required) errors.push(`${c.spec.name}: required value missing`);
    } else if ('error' in r) errors.push(r.error);
    else values[c.spec.name] = r.value;
  }
  return { values, matches, errors };
}

function metadataOf(patterns: PlannedResultPattern[]): TaskResultDoc['metadata'] {
  const md: TaskResultDoc['metadata'] = {};
  for (const p of patterns) md[p.name] = { unit: p.unit ?? null, type: p.type, aggregate: p.aggregate };
  return md;
}

/** Resolves `result.file` inside the task dir; refuses absolute paths and `..`. */
export function resultFilePath(outputDir: string, file: string): string | undefined {
  if (isAbsolute(file)) return undefined;
  const p = resolve(outputDir, file);
  return relativeInside(outputDir, p) === undefined ? undefined : p;
}

async function parseFileResult(
  task: PlannedTask,
  file: string,
): Promise<Partial<TaskResultDoc> & { errors: string[] }> {
  const path = resultFilePath(task.outputDir, file);
  if (!path) return { errors: [`result file must be relative to the task output dir: ${file}`], values: {} };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const why = errorCode(e) === 'ENOENT' ? 'not found' : errorMessage(e);
    return { errors: [`result file ${file}: ${why}`], values: {} };
  }
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    return { errors: [`result file ${file}: invalid JSON: ${truncate(errorMessage(e))}`], values: {} };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    return { errors: [`result file ${file}: expected a JSON object`], values: {} };
  }
  const o = obj as Record<string, unknown>;
  if (o.schema_version === RESULT_SCHEMA) {
    const errors = Array.isArray(o.errors) ? o.errors.map(String) : [];
    const isObj = (v: unknown): v is Record<string, never> =>
      !!v && typeof v === 'object' && !Array.isArray(v);
    if (!isObj(o.values)) errors.push(`result file ${file}: 'values' must be an object`);
    return {
      values: isObj(o.values) ? o.values : {},
      metadata: isObj(o.metadata) ? o.metadata : {},
      matches: isObj(o.matches) ? o.matches : {},
      ok: o.ok === false ? false : undefined,
      errors,
    };
  }
  return { values: o, errors: [] };
}

/** Parses the task's result and writes `<task dir>/result.json` atomically. */
export async function collectTaskResult(
  task: PlannedTask,
  result: PlannedResult = task.result as PlannedResult,
): Promise<ParsedResult> {
  const logName = basename(task.logPath);
  let doc: TaskResultDoc;
  if (result.file) {
    const r = await parseFileResult(task, result.file);
    doc = {
      schema_version: RESULT_SCHEMA,
      task: task.name,
      status: 'COMPLETED',
      ok: r.ok !== false && r.errors.length === 0,
      source: { type: 'file', path: result.file },
      values: r.values ?? {},
      metadata: r.metadata ?? {},
      matches: r.matches ?? {},
      errors: r.errors,
    };
  } else {
    const r = await parseLogResult(result.patterns, task.logPath);
    doc = {
      schema_version: RESULT_SCHEMA,
      task: task.name,
      status: 'COMPLETED',
      ok: r.errors.length === 0,
      source: { type: 'log', path: logName },
      values: r.values,
      metadata: metadataOf(result.patterns),
      matches: r.matches,
      errors: r.errors,
    };
  }
  const path = resolve(task.outputDir, 'result.json');
  let written: string | undefined = path;
  try {
    await writeJsonAtomic(path, doc);
  } catch (e) {
    doc.ok = false;
    doc.errors.push(`cannot write result.json: ${errorMessage(e)}`);
    written = undefined;
  }
  return { doc, path: written, values: toPlain(doc.values) as Record<string, unknown> };
}
