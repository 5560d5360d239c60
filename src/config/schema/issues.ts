/**
 * zod issue → SchemaIssue: one clear English message per problem, with a hint where one helps.
 */
import type * as z from 'zod';
import { didYouMean } from '../errors.js';
import { decodeMessage, describe } from './common.js';

export type SchemaPath = (string | number)[];

export interface SchemaIssue {
  path: SchemaPath;
  message: string;
  hint?: string;
  /** true when the location should point at the key itself (unknown key) rather than its value */
  atKey?: boolean;
}

/** `workflow.tasks[0].script` */
export function formatPath(path: SchemaPath): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${p}` : p;
  }
  return out;
}

type Issue = z.core.$ZodIssue & { input?: unknown };

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
  null: 'null',
};

function expectedWord(e: string): string {
  return ARTICLE[e] ?? e;
}

function lastKey(path: SchemaPath): string {
  for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === 'string') return String(path[i]);
  return '?';
}

function stripZod(m: string): string {
  return m.replace(/^Invalid input: /, '').replace(/^Invalid input$/, 'invalid value');
}

/** A branch whose every problem sits at the union's own position: the value was of another kind. */
function isRootOnly(branch: readonly Issue[]): boolean {
  return branch.every((i) => i.path.length === 0);
}

function convertOne(iss: Issue, base: SchemaPath, out: SchemaIssue[]): void {
  const path = [...base, ...iss.path.filter((k) => typeof k !== 'symbol')];
  const decoded = decodeMessage(iss.message);
  if (decoded?.unknownIn && iss.code === 'unrecognized_keys') {
    const known = decoded.known ?? [];
    for (const key of iss.keys) {
      out.push({
        path: [...path, key],
        message: `unknown key '${key}' in ${decoded.unknownIn}`,
        hint: decoded.keyHints?.[key] ?? didYouMean(key, known) ?? `allowed keys: ${known.join(', ')}`,
        atKey: true,
      });
    }
    return;
  }
  if (decoded?.missing) {
    out.push({ path, message: `missing required key '${lastKey(path)}'` });
    return;
  }
  if (decoded?.message !== undefined) {
    out.push({ path, message: decoded.message, ...(decoded.hint ? { hint: decoded.hint } : {}) });
    return;
  }
  switch (iss.code) {
    case 'invalid_union': {
      const branches = iss.errors.filter((b) => b.length > 0);
      const deep = branches.filter((b) => !isRootOnly(b));
      if (deep.length > 0) {
        // the branch that got furthest: fewest problems wins
        const best = deep.reduce((a, b) => (b.length < a.length ? b : a));
        for (const sub of best) convertOne(sub, path, out);
        return;
      }
      // every branch failed at the value itself: prefer "right kind, failed a check" over
      // "wrong kind", then our own wording over zod's
      const flat = branches.flat();
      const own =
        flat.find((b) => b.code !== 'invalid_type') ??
        flat.find((b) => decodeMessage(b.message)?.message !== undefined);
      if (own) return convertOne(own, path, out);
      const expected = [
        ...new Set(branches.flat().map((b) => ('expected' in b ? String(b.expected) : ''))),
      ].filter(Boolean);
      out.push({
        path,
        message:
          iss.input === undefined
            ? `missing required key '${lastKey(path)}'`
            : `expected ${expected.map(expectedWord).join(' or ') || 'a different value'}, got ${describe(iss.input)}`,
      });
      return;
    }
    case 'invalid_type':
      out.push({
        path,
        message:
          iss.input === undefined
            ? `missing required key '${lastKey(path)}'`
            : `expected ${expectedWord(iss.expected)}, got ${describe(iss.input)}`,
      });
      return;
    case 'invalid_value': {
      const vals = iss.values.map((v) => `'${String(v)}'`).join(', ');
      const hint =
        typeof iss.input === 'string'
          ? didYouMean(
              iss.input,
              iss.values.map((v) => String(v)),
            )
          : undefined;
      out.push({
        path,
        message: `expected one of ${vals}, got ${describe(iss.input)}`,
        ...(hint ? { hint } : {}),
      });
      return;
    }
    case 'unrecognized_keys':
      for (const key of iss.keys)
        out.push({ path: [...path, key], message: `unknown key '${key}'`, atKey: true });
      return;
    default:
      out.push({ path, message: stripZod(iss.message) });
  }
}

/** Converts zod's issues into SchemaIssues (deduplicated, in order). */
export function toSchemaIssues(issues: readonly z.core.$ZodIssue[], base: SchemaPath = []): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const iss of issues) convertOne(iss, base, out);
  const seen = new Set<string>();
  return typoFirst(
    out.filter((i) => {
      const k = JSON.stringify([i.path, i.message]);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    }),
  );
}

const isUnknownKey = (i: SchemaIssue): boolean => i.atKey === true && i.message.startsWith('unknown key ');

/**
 * A typo'd key (`scirpt:`) is the cause, the "missing required key 'script'" next to it only its
 * echo: unknown keys come first (so the error is located at the typo), and a missing key that an
 * unknown sibling's did-you-mean names is dropped.
 */
function typoFirst(issues: SchemaIssue[]): SchemaIssue[] {
  const parent = (i: SchemaIssue) => JSON.stringify(i.path.slice(0, -1));
  const meant = new Set(
    issues
      .filter(isUnknownKey)
      .map((i) => `${parent(i)}|${/^did you mean '([^']+)'\?$/.exec(i.hint ?? '')?.[1]}`),
  );
  const kept = issues.filter((i) => {
    const key = /^missing required key '([^']+)'$/.exec(i.message)?.[1];
    return !(key && meant.has(`${parent(i)}|${key}`));
  });
  return [...kept.filter(isUnknownKey), ...kept.filter((i) => !isUnknownKey(i))];
}
