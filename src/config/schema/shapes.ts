/** Lists, strict mappings, records and shape-based dispatch, all with user-facing messages. */
import * as z from 'zod';
import { atomJsonSchemas, describe, MARK, msg, str, type EncodedMessage } from './common.js';

type RawIssue = { code?: string; input?: unknown };

/** A list; `nonEmpty` adds "'<what>' cannot be empty". */
export function list<T extends z.ZodType>(item: T, what?: string, nonEmpty = false) {
  const arr = z.array(item, {
    error: (iss: RawIssue) =>
      iss.code === 'invalid_type' && iss.input !== undefined
        ? msg(`expected a list${what ? ` for '${what}'` : ''}, got ${describe(iss.input)}`)
        : undefined,
  });
  return nonEmpty ? arr.min(1, { error: msg(`'${what ?? 'list'}' cannot be empty`), abort: true }) : arr;
}

export const strList = (what?: string) => list(str(), what);

/**
 * Strict mapping: unknown keys are reported one by one with a did-you-mean hint;
 * `keyHints` gives a tailored hint for keys people commonly put in the wrong place.
 */
export function strictObject<S extends z.ZodRawShape>(
  label: string,
  shape: S,
  keyHints?: Record<string, string>,
) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss: RawIssue) => {
      if (iss.code === 'unrecognized_keys')
        return MARK + JSON.stringify({ unknownIn: label, known, keyHints } satisfies EncodedMessage);
      if (iss.code === 'invalid_type' && iss.input !== undefined)
        return msg(`expected a mapping for ${label}, got ${describe(iss.input)}`);
      return undefined;
    },
  });
}

/** A name → value mapping. */
export function record<T extends z.ZodType>(value: T, what: string) {
  return z.record(z.string(), value, {
    error: (iss: RawIssue) =>
      iss.code === 'invalid_type' && iss.input !== undefined
        ? msg(`expected a mapping for ${what}, got ${describe(iss.input)}`)
        : undefined,
  });
}

/**
 * Chooses the schema for a value by its shape (e.g. string vs mapping) and reports that
 * schema's issues only, instead of a union's mix of both.
 */
export function dispatch<S extends readonly z.ZodType[]>(
  options: S,
  pick: (v: unknown) => S[number],
): z.ZodType<z.output<S[number]>> {
  const input = z.unknown();
  atomJsonSchemas.set(input, (convert) => ({ anyOf: options.map((o) => convert(o)) }));
  return input.transform((v, ctx) => {
    const r = pick(v).safeParse(v, { reportInput: true });
    if (r.success) return r.data;
    for (const iss of r.error.issues) ctx.addIssue(iss as unknown as z.core.$ZodRawIssue);
    return z.NEVER;
  });
}
