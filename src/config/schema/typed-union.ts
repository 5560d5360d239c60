/** Discriminated unions on `type` (backends, operators, storage) with one clear message. */
import * as z from 'zod';
import { didYouMean } from '../errors.js';
import { describe, isPlainObject, msg } from './common.js';

type Options = readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]];

export function typedUnion<const O extends Options>(
  kind: string,
  options: O,
  special: Record<string, { message: string; hint?: string }> = {},
) {
  return z.discriminatedUnion('type', options, {
    error: (iss: { code?: string; input?: unknown }) => {
      if (iss.code !== 'invalid_union') {
        return iss.code === 'invalid_type' && iss.input !== undefined
          ? msg(`expected a mapping for ${kind}, got ${describe(iss.input)}`)
          : undefined;
      }
      const valid = options.map((o) => {
        const v = o._zod.propValues?.type;
        return v ? [...v].join('/') : '?';
      });
      const list = valid.join(', ');
      const t = isPlainObject(iss.input) ? iss.input.type : undefined;
      if (t === undefined)
        return msg(`missing required key 'type' in ${kind}`, `valid ${kind} types: ${list}`);
      if (typeof t === 'string' && special[t]) return msg(special[t].message, special[t].hint);
      if (typeof t !== 'string')
        return msg(`${kind} 'type' must be a string, got ${describe(t)}`, `valid ${kind} types: ${list}`);
      const dym = didYouMean(t, valid);
      return msg(`unknown ${kind} type '${t}'`, `${dym ? `${dym} ` : ''}valid ${kind} types: ${list}`);
    },
  });
}
