/** Test-local helpers: read YAML and normalise named collections to list form (the loader's job). */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { validateRecipe, type SchemaIssue } from '../../../src/config/schema/index.js';
import { sharedPath } from '../../helpers/shared.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toList(v: unknown, scalarShorthand: boolean): unknown {
  if (!isObj(v)) return v;
  return Object.entries(v).map(([name, body]) =>
    isObj(body) ? { ...body, name } : scalarShorthand ? { name, value: body } : { name },
  );
}

export function normalise(doc: unknown): unknown {
  if (!isObj(doc)) return doc;
  const out: Obj = { ...doc };
  for (const k of ['variables', 'artifacts', 'backends', 'operators', 'storage'])
    if (k in out) out[k] = toList(out[k], k === 'variables');
  if (isObj(out.workflow)) {
    const wf: Obj = { ...out.workflow };
    if ('variables' in wf) wf.variables = toList(wf.variables, true);
    if ('tasks' in wf) wf.tasks = toList(wf.tasks, false);
    out.workflow = wf;
  }
  return out;
}

export function loadYaml(file: string): unknown {
  return normalise(parse(readFileSync(file, 'utf8')));
}

/** Parses a YAML snippet (already list form or not) and normalises it. */
export function y(text: string): unknown {
  return normalise(parse(text));
}

/**
 * Makes a multi-file fragment validatable on its own: adds a workflow name and stub tasks
 * for the task names it references across files. Everything the fragment itself declares
 * is left untouched.
 */
export function completeFragment(doc: unknown): unknown {
  if (!isObj(doc)) return doc;
  const wf: Obj = isObj(doc.workflow) ? { ...doc.workflow } : {};
  const tasks = Array.isArray(wf.tasks) ? [...(wf.tasks as Obj[])] : [];
  const names = new Set(tasks.map((t) => t.name));
  const wanted = new Set<string>();
  for (const t of tasks)
    for (const d of [
      ...((t.depends_on as string[] | undefined) ?? []),
      ...((t.required_by as string[] | undefined) ?? []),
    ])
      wanted.add(d);
  if (tasks.length === 0) wanted.add('stub');
  for (const n of wanted) if (!names.has(n)) tasks.push({ name: n, script: ['true'] });
  return { ...doc, workflow: { name: 'fragment', ...wf, tasks } };
}

/** The real recipes (compat/) and spec examples, read from `<repo>/../shared` when it exists. */
export const SINGLE_FILE_DIRS = [sharedPath('compat'), sharedPath('spec', 'examples')];

// ---- builders for focused cases ----

export const task = (extra: Obj = {}): Obj => ({ name: 'a', script: ['echo a'], ...extra });

/** A minimal valid recipe with `top` keys merged in, the given tasks and extra workflow keys. */
export const recipe = (top: Obj = {}, tasks: Obj[] = [task()], wfExtra: Obj = {}): Obj => ({
  ...top,
  workflow: { name: 'w', tasks, ...wfExtra },
});

export function issuesOf(doc: unknown): SchemaIssue[] {
  const r = validateRecipe(doc);
  return r.ok ? [] : r.issues;
}

export interface Expected {
  path: (string | number)[];
  message: string | RegExp;
  hint?: string | RegExp;
}

/** The issue at `path` whose message matches; throws with every issue listed if none does. */
export function findIssue(doc: unknown, e: Expected): SchemaIssue {
  const all = issuesOf(doc);
  const hit = all.find(
    (i) =>
      JSON.stringify(i.path) === JSON.stringify(e.path) &&
      (typeof e.message === 'string' ? i.message === e.message : e.message.test(i.message)),
  );
  if (!hit)
    throw new Error(
      `no issue ${JSON.stringify(e.path)} ${String(e.message)}; got ${JSON.stringify(all, null, 1)}`,
    );
  if (e.hint !== undefined) {
    const ok = typeof e.hint === 'string' ? hit.hint === e.hint : e.hint.test(hit.hint ?? '');
    if (!ok) throw new Error(`hint mismatch for ${String(e.message)}: ${String(hit.hint)}`);
  }
  return hit;
}
