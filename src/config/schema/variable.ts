/** `variables[*]`, `workflow.variables[*]` (config §1.5). */
import * as z from 'zod';
import { fail, isExpr, present, str } from './common.js';
import { list, strictObject } from './shapes.js';

/** Loose equality used for `domain` membership (1 == 1.0, deep for lists/maps). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null)
    return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

function render(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : JSON.stringify(v);
}

export const VariableSchema = strictObject('variable', {
  name: str(),
  description: str().nullable().optional(),
  value: present(),
  /** free string at load; unknown names fail at plan */
  type: str().optional(),
  domain: list(z.unknown(), 'domain').nullable().optional(),
  /** sflow extension: the value is never written to the run record (config/secret-variables.ts) */
  secret: z.boolean().optional(),
}).superRefine((v, ctx) => {
  if (v.domain == null || isExpr(v.value)) return;
  if (!v.domain.some((d) => sameValue(d, v.value))) {
    fail(
      ctx,
      ['value'],
      `Value ${render(v.value)} is not in the allowed domain: [${v.domain.map(render).join(', ')}]`,
      `variable '${v.name}': pick one of the domain values or extend 'domain'`,
    );
  }
});

export type Variable = z.output<typeof VariableSchema>;

export const VariablesSchema = list(VariableSchema, 'variables');
