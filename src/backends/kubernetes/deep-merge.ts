/**
 * `container_overrides` / `pod_overrides` and `security_context` (backends.md §5.2): raw dicts
 * deep-merged over what sflow built — dicts merge key by key, lists are replaced (a warning names
 * each replaced list, since a replaced `volumes` or `env` drops what sflow put there), except
 * `capabilities.add` / `capabilities.drop`, which are unions so sflow's IPC_LOCK stays.
 */
type Obj = Record<string, unknown>;

const isList = (v: unknown): v is unknown[] => Array.isArray(v);

export const isRawObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `over` (the recipe's dict, any Kubernetes JSON) merged over the manifest part sflow built. The
 * result is claimed to be the part's type: the recipe may write any field there, and the API
 * server, not sflow, is what validates it.
 */
export function deepMerge<T extends object>(
  base: T,
  over: Obj,
  path: string,
  warn: (m: string) => void,
  unionLists = false,
): T {
  return mergeRaw(Object.fromEntries(Object.entries(base)), over, path, warn, unionLists) as T;
}

/**
 * The recipe's own Kubernetes JSON (`ports:` entries) passed into a manifest as written: sflow
 * neither reads nor checks it, the API server validates it.
 */
export function asWritten<T>(v: readonly unknown[]): T[] {
  return v as T[];
}

function mergeRaw(base: Obj, over: Obj, path: string, warn: (m: string) => void, unionLists: boolean): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const here = path ? `${path}.${k}` : k;
    const cur = out[k];
    if (isRawObject(cur) && isRawObject(v))
      out[k] = mergeRaw(cur, v, here, warn, unionLists || k === 'capabilities');
    else if (isList(cur) && isList(v)) {
      if (unionLists) out[k] = [...new Set<unknown>([...cur, ...v])];
      else {
        if (cur.length)
          warn(
            `${here}: the list sflow built (${cur.length} entr${cur.length === 1 ? 'y' : 'ies'}) is replaced by the override`,
          );
        out[k] = v;
      }
    } else out[k] = v;
  }
  return out;
}
