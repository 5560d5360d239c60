/**
 * A deliberately small JSON Schema checker for tests (the keywords our generated schema
 * uses). Returns the list of failures as `path: reason`.
 */
type J = Record<string, unknown>;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === 'number' && actual === 'integer');
}

export function check(schema: J, v: unknown, path = '$'): string[] {
  const errs: string[] = [];
  const fail = (why: string) => errs.push(`${path}: ${why}`);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeMatches(v, t)))
      return [`${path}: expected ${types.join('|')}, got ${typeOf(v)}`];
  }
  if ('const' in schema && v !== schema.const) fail(`expected ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(v)) fail(`not in enum`);
  if (typeof v === 'number') {
    if (typeof schema.minimum === 'number' && v < schema.minimum) fail('below minimum');
    if (typeof schema.maximum === 'number' && v > schema.maximum) fail('above maximum');
    if (typeof schema.exclusiveMinimum === 'number' && v <= schema.exclusiveMinimum)
      fail('not above exclusiveMinimum');
  }
  if (typeof v === 'string') {
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(v)) fail('pattern');
    if (typeof schema.minLength === 'number' && v.length < schema.minLength) fail('too short');
  }
  if (Array.isArray(v)) {
    if (typeof schema.minItems === 'number' && v.length < schema.minItems) fail('too few items');
    if (schema.items && typeof schema.items === 'object')
      v.forEach((x, i) => errs.push(...check(schema.items as J, x, `${path}[${i}]`)));
  }
  if (typeOf(v) === 'object') {
    const o = v as J;
    const props = (schema.properties ?? {}) as Record<string, J>;
    for (const r of (schema.required as string[] | undefined) ?? []) if (!(r in o)) fail(`missing '${r}'`);
    const n = Object.keys(o).length;
    if (typeof schema.minProperties === 'number' && n < schema.minProperties) fail('too few properties');
    if (typeof schema.maxProperties === 'number' && n > schema.maxProperties) fail('too many properties');
    for (const [k, x] of Object.entries(o)) {
      if (props[k]) errs.push(...check(props[k], x, `${path}.${k}`));
      else if (schema.additionalProperties === false) fail(`unknown key '${k}'`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        errs.push(...check(schema.additionalProperties as J, x, `${path}.${k}`));
    }
  }
  const alts = (key: string) => (schema[key] as J[]).map((s) => check(s, v, path));
  if (Array.isArray(schema.anyOf)) {
    const results = alts('anyOf');
    if (!results.some((r) => r.length === 0))
      errs.push(...results.reduce((a, b) => (b.length < a.length ? b : a)));
  }
  if (Array.isArray(schema.oneOf)) {
    const results = alts('oneOf');
    const ok = results.filter((r) => r.length === 0).length;
    if (ok !== 1)
      errs.push(
        ok === 0
          ? (results.reduce((a, b) => (b.length < a.length ? b : a))[0] ?? `${path}: oneOf`)
          : `${path}: matches ${ok} of oneOf`,
      );
  }
  if (Array.isArray(schema.allOf)) for (const r of alts('allOf')) errs.push(...r);
  return errs;
}
