/**
 * `container_overrides` / `pod_overrides` and `security_context` (backends.md §5.2): raw dicts
 * deep-merged over what sflow built — dicts merge key by key, lists are replaced (a warning names
 * each replaced list, since a replaced `volumes` or `env` drops what sflow put there), except
 * `capabilities.add` / `capabilities.drop`, which are unions so sflow's IPC_LOCK stays.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function deepMerge(
  base: Obj,
  over: Obj,
  path: string,
  warn: (m: string) => void,
  unionLists = false,
): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const here = path ? `${path}.${k}` : k;
    const cur = out[k];
    if (isObj(cur) && isObj(v)) out[k] = deepMerge(cur, v, here, warn, unionLists || k === 'capabilities');
    else if (Array.isArray(cur) && Array.isArray(v)) {
      if (unionLists) out[k] = [...new Set([...(cur as unknown[]), ...(v as unknown[])])];
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
