/**
 * The command line's options as the adapters read them: commander's parse, by camelCase option
 * name, each value one of the shapes commander gives (a flag's boolean, an argument's string or
 * number, a repeatable flag's list). The CLI converts its parse (`cliOptionBag`) where it hands
 * options to a backend kind, `recover` or the not-yet rows; each reads only the options it owns.
 */

/** one option's value */
export type CliValue = string | number | boolean | readonly string[];

/** the options by camelCase name */
export interface CliOptionBag {
  readonly [option: string]: CliValue | undefined;
}

/** a value of another shape (none today) is kept as its text, so a set option never reads as unset */
function cliValue(v: unknown): CliValue | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : String(x)));
  return String(v);
}

/** commander's parse (`cmd.opts()`) as a bag of typed values */
export function cliOptionBag(opts: object): CliOptionBag {
  const bag: Record<string, CliValue> = {};
  for (const [k, v] of Object.entries(opts)) {
    const c = cliValue(v);
    if (c !== undefined) bag[k] = c;
  }
  return bag;
}
