/**
 * Named collections (`variables`, `artifacts`, `backends`, `operators`, `storage`,
 * `workflow.variables`, `workflow.tasks`) may be written as a list of `{name, …}` mappings, as a
 * mapping from name to body, or (dict form) as `NAME: scalar` shorthand for `{name, value}`.
 * Everything downstream sees the list form; source positions are carried over.
 */
import { copyEntryOrigin, getOrigin, setOrigin, type Origin } from './source.js';

export const TOP_COLLECTIONS = ['variables', 'artifacts', 'backends', 'operators', 'storage'] as const;
export const WORKFLOW_COLLECTIONS = ['variables', 'tasks'] as const;

type Obj = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Normalise one collection value to list form (returns the input when it is neither a list nor a map). */
export function toListForm(section: unknown): unknown {
  if (Array.isArray(section) || !isPlainObject(section)) return section;
  const list: unknown[] = [];
  const listOrigin: Origin = { self: getOrigin(section)?.self, entries: new Map() };
  for (const name of namesInFileOrder(section)) {
    const body = section[name];
    const entry = getOrigin(section)?.entries.get(name);
    let item: Obj;
    if (isPlainObject(body)) {
      item = {};
      const itemOrigin: Origin = { self: getOrigin(body)?.self ?? entry?.value, entries: new Map() };
      setOrigin(item, itemOrigin);
      item.name = name;
      if (entry?.key) itemOrigin.entries.set('name', { key: entry.key, value: entry.key });
      for (const [k, v] of Object.entries(body)) {
        if (k === 'name') continue; // the key wins over a `name` written inside the body
        item[k] = v;
        copyEntryOrigin(item, k, body, k);
      }
    } else {
      item = { name, value: body };
      setOrigin(item, {
        self: entry?.key,
        entries: new Map([
          ['name', { key: entry?.key, value: entry?.key }],
          ['value', { key: entry?.key, value: entry?.value, float: entry?.float, text: entry?.text }],
        ]),
      });
    }
    listOrigin.entries.set(list.length, { key: entry?.key, value: entry?.key ?? entry?.value });
    list.push(item);
  }
  setOrigin(list, listOrigin);
  return list;
}

/**
 * Keys in the order they were written: a JS object lists integer-like keys (`"1":`) first, the
 * position registry keeps the file order.
 */
function namesInFileOrder(section: Obj): string[] {
  const keys = Object.keys(section);
  const written = [...(getOrigin(section)?.entries.keys() ?? [])].filter(
    (k): k is string => typeof k === 'string' && Object.hasOwn(section, k),
  );
  return written.length === keys.length ? written : keys;
}

/** Normalise every named collection of one parsed document, in place. */
export function normaliseCollections(doc: Obj): Obj {
  for (const key of TOP_COLLECTIONS) {
    if (key in doc) doc[key] = emptyToList(toListForm(doc[key]));
  }
  const wf = doc.workflow;
  if (isPlainObject(wf)) {
    for (const key of WORKFLOW_COLLECTIONS) {
      if (key in wf) wf[key] = emptyToList(toListForm(wf[key]));
    }
  }
  return doc;
}

function emptyToList(v: unknown): unknown {
  return v === null ? [] : v;
}
