/**
 * Building blocks shared by every section schema: expression-aware scalar types, strict
 * objects that report unknown keys with a did-you-mean, and the private message encoding
 * that lets `issues.ts` turn zod's raw issues into one clear SchemaIssue per problem.
 */
import * as z from 'zod';

/** A string that still holds an unevaluated `${{ }}` expression. */
export type Expr = `${string}\${{${string}`;

/** A string that still holds an unevaluated `${{ }}` expression. */
export function isExpr(v: unknown): v is Expr {
  return typeof v === 'string' && v.includes('${{');
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Human wording of a value for "got …" messages. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') {
    const s = v.length > 60 ? `${v.slice(0, 57)}...` : v;
    return `string '${s}'`;
  }
  return `${typeof v} ${String(v)}`;
}

// ---------------------------------------------------------------------------
// Private message encoding. A message produced by our own schemas starts with MARK and
// carries JSON; anything else is zod's default wording and gets rewritten in issues.ts.
// ---------------------------------------------------------------------------
export const MARK = '\u0001';

export interface EncodedMessage {
  message?: string;
  hint?: string;
  /** set by strict objects on unknown keys: where, and which keys are allowed */
  unknownIn?: string;
  known?: string[];
  keyHints?: Record<string, string>;
  /** the value was absent: issues.ts words it as `missing required key '<key>'` */
  missing?: boolean;
}

export const MISSING_MSG = MARK + JSON.stringify({ missing: true } satisfies EncodedMessage);

export function msg(message: string, hint?: string): string {
  return MARK + JSON.stringify({ message, hint } satisfies EncodedMessage);
}

export function decodeMessage(m: string): EncodedMessage | undefined {
  if (!m.startsWith(MARK)) return undefined;
  return JSON.parse(m.slice(1)) as EncodedMessage;
}

type RawIssue = { code?: string; input?: unknown };

/** Adds a custom issue from a refinement. */
export function fail(
  ctx: { addIssue: (i: z.core.$ZodRawIssue) => void },
  path: (string | number)[],
  message: string,
  hint?: string,
): void {
  // `continue: false`: enclosing refinements must never see a value that failed here
  ctx.addIssue({ code: 'custom', message: msg(message, hint), path, input: undefined, continue: false });
}

/** a node named in both `include_nodes` and `exclude_nodes` is an error (at its exclude entry) */
export function refineNodeFilters(
  b: { name: string; include_nodes?: string[]; exclude_nodes?: string[] },
  ctx: Parameters<typeof fail>[0],
): void {
  const inc = new Set(b.include_nodes ?? []);
  (b.exclude_nodes ?? []).forEach((n, i) => {
    if (inc.has(n))
      fail(
        ctx,
        ['exclude_nodes', i],
        `backend '${b.name}': node '${n}' is in both include_nodes and exclude_nodes`,
        'name each node in one of the two lists',
      );
  });
}

// ---------------------------------------------------------------------------
// Atoms: z.custom with an explicit JSON Schema (see json-schema.ts) and one message.
// ---------------------------------------------------------------------------
export type JsonSchemaObject = Record<string, unknown>;
/** JSON Schema for schemas zod cannot describe; a function is called with a converter. */
export type JsonSchemaEntry =
  JsonSchemaObject | ((convert: (s: z.ZodType) => JsonSchemaObject) => JsonSchemaObject);
export const atomJsonSchemas = new WeakMap<object, JsonSchemaEntry>();

export type Problem = string | { message: string; hint?: string } | undefined;

export function atom<T>(json: JsonSchemaEntry, check: (v: unknown) => Problem): z.ZodType<T> {
  const schema = z.custom<T>((v) => v !== undefined && check(v) === undefined, {
    abort: true,
    error: (iss: RawIssue) => {
      if (iss.input === undefined) return MISSING_MSG;
      const p = check(iss.input) ?? 'invalid value';
      return typeof p === 'string' ? msg(p) : msg(p.message, p.hint);
    },
  });
  atomJsonSchemas.set(schema, json);
  return schema;
}

export const EXPR_JSON = { type: 'string', pattern: '\\$\\{\\{' };

export interface NumOpts {
  /** inclusive lower bound for literal values */
  min?: number;
  /** exclusive lower bound for literal values */
  gt?: number;
  max?: number;
}

function rangeProblem(n: number, o: NumOpts): string | undefined {
  if (o.min !== undefined && n < o.min) return `must be >= ${o.min}, got ${n}`;
  if (o.gt !== undefined && n <= o.gt) return `must be > ${o.gt}, got ${n}`;
  if (o.max !== undefined && n > o.max) return `must be <= ${o.max}, got ${n}`;
  return undefined;
}

function rangeJson(o: NumOpts): Record<string, unknown> {
  const j: Record<string, unknown> = {};
  if (o.min !== undefined) j.minimum = o.min;
  if (o.gt !== undefined) j.exclusiveMinimum = o.gt;
  if (o.max !== undefined) j.maximum = o.max;
  return j;
}

/** An integer (2.0 counts, 1.5 and booleans do not) or a `${{ }}` expression string. */
export function intOrExpr(o: NumOpts = {}): z.ZodType<number | Expr> {
  return atom({ anyOf: [{ type: 'integer', ...rangeJson(o) }, EXPR_JSON] }, (v) => {
    if (isExpr(v)) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v))
      return `expected an integer or a \${{ }} expression, got ${describe(v)}`;
    return rangeProblem(v, o);
  });
}

/** A plain literal integer (no expressions), e.g. monitor fields. */
export function literalInt(o: NumOpts = {}): z.ZodType<number> {
  return atom({ type: 'integer', ...rangeJson(o) }, (v) => {
    if (isExpr(v)) return `expressions are not resolved here; use a literal integer, got ${describe(v)}`;
    if (typeof v !== 'number' || !Number.isInteger(v)) return `expected an integer, got ${describe(v)}`;
    return rangeProblem(v, o);
  });
}

/** Any number or a `${{ }}` expression. */
export function numOrExpr(o: NumOpts = {}): z.ZodType<number | Expr> {
  return atom({ anyOf: [{ type: 'number', ...rangeJson(o) }, EXPR_JSON] }, (v) => {
    if (isExpr(v)) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v))
      return `expected a number or a \${{ }} expression, got ${describe(v)}`;
    return rangeProblem(v, o);
  });
}

/** true/false or a `${{ }}` expression. */
export function boolOrExpr(): z.ZodType<boolean | Expr> {
  return atom({ anyOf: [{ type: 'boolean' }, EXPR_JSON] }, (v) =>
    typeof v === 'boolean' || isExpr(v)
      ? undefined
      : `expected true/false or a \${{ }} expression, got ${describe(v)}`,
  );
}

/** Strict boolean. */
export function bool(): z.ZodType<boolean> {
  return atom({ type: 'boolean' }, (v) =>
    typeof v === 'boolean' ? undefined : `expected true or false, got ${describe(v)}`,
  );
}

/** A string (expressions are strings too). */
export function str(opts: { nonEmpty?: boolean } = {}): z.ZodType<string> {
  return atom({ type: 'string', ...(opts.nonEmpty ? { minLength: 1 } : {}) }, (v) => {
    if (typeof v !== 'string') return `expected a string, got ${describe(v)}`;
    if (opts.nonEmpty && v.trim() === '') return 'must not be empty';
    return undefined;
  });
}

/** A string or an integer kept as written (srun `ntasks: "4"`, slurm `time: 30`). */
export function strOrInt(): z.ZodType<string | number> {
  return atom({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, (v) =>
    typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))
      ? undefined
      : `expected a string or an integer, got ${describe(v)}`,
  );
}

/** A string or a number kept as written (Kubernetes quantities such as `cpu: 2` / `"500m"`). */
export function strOrNum(): z.ZodType<string | number> {
  return atom({ anyOf: [{ type: 'string' }, { type: 'number' }] }, (v) =>
    typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))
      ? undefined
      : `expected a string or a number, got ${describe(v)}`,
  );
}

/** A scalar rendered as a string (numbers and booleans are stringified). */
export function scalarString(): z.ZodType<string> {
  const base = atom<string | number | boolean>(
    { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
    (v) =>
      typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
        ? undefined
        : `expected a string, got ${describe(v)}`,
  );
  return base.transform((v) => String(v));
}

/** One of a fixed set of string values; the hint proposes the closest one. */
export function oneOf<const T extends string>(
  values: readonly T[],
  opts?: { caseInsensitive?: boolean; allowExpr?: false; allowBool?: false },
): z.ZodType<T>;
export function oneOf<const T extends string>(
  values: readonly T[],
  opts: { caseInsensitive?: boolean; allowExpr: true; allowBool?: false },
): z.ZodType<T | Expr>;
export function oneOf<const T extends string>(
  values: readonly T[],
  opts: { caseInsensitive?: boolean; allowExpr?: boolean; allowBool: true },
): z.ZodType<T | Expr | boolean>;
export function oneOf<const T extends string>(
  values: readonly T[],
  opts: { caseInsensitive?: boolean; allowExpr?: boolean; allowBool?: boolean } = {},
): z.ZodType<unknown> {
  const alts: Record<string, unknown>[] = [{ enum: values }];
  if (opts.allowExpr) alts.push(EXPR_JSON);
  if (opts.allowBool) alts.push({ type: 'boolean' });
  const schema = atom<string>(alts.length > 1 ? { anyOf: alts } : alts[0], (v) => {
    if (opts.allowExpr && isExpr(v)) return undefined;
    if (opts.allowBool && typeof v === 'boolean') return undefined;
    const s = typeof v === 'string' && opts.caseInsensitive ? v.trim().toLowerCase() : v;
    if (typeof s === 'string' && values.some((x) => x === s)) return undefined;
    const list = values.map((x) => `'${x}'`).join(', ');
    const extra = `${opts.allowBool ? ', true, false' : ''}${opts.allowExpr ? ' or a ${{ }} expression' : ''}`;
    return `expected one of ${list}${extra}, got ${describe(v)}`;
  });
  if (!opts.caseInsensitive) return schema;
  return schema.transform((v) => (typeof v !== 'string' || isExpr(v) ? v : v.trim().toLowerCase()));
}

/** Any value, but the key must be present (it may be null). */
export function present(): z.ZodType<unknown> {
  return atom({}, () => undefined);
}
