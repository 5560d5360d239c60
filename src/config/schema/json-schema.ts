/**
 * JSON Schema (draft 2020-12) of the SOURCE format, for editors: generated from the same zod
 * schemas, then named collections are widened to accept list form, dict form (name → body)
 * and, for variables, the scalar shorthand `X: 5`.
 */
import * as z from 'zod';
import { atomJsonSchemas } from './common.js';
import { RecipeSchema } from './recipe.js';

/** zod's JSON Schema type: its keywords typed, any other key unknown. */
type J = z.core.JSONSchema.JSONSchema;

function convert(schema: z.ZodType): J {
  const out: J = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const entry = atomJsonSchemas.get(ctx.zodSchema);
      if (!entry) return;
      const js = typeof entry === 'function' ? entry(convert) : entry;
      for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
      Object.assign(ctx.jsonSchema, js);
    },
  });
  delete out.$schema;
  return out;
}

/** The body of a dict-form entry: the item schema without `name` required. */
function withoutRequiredName(item: J): J {
  const copy = structuredClone(item);
  const strip = (s: J) => {
    if (Array.isArray(s.required)) {
      const required = s.required.filter((k) => k !== 'name');
      if (required.length === 0) delete s.required;
      else s.required = required;
    }
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const branches = s[key];
      if (Array.isArray(branches)) branches.forEach(strip);
    }
  };
  strip(copy);
  return copy;
}

function widen(parent: J | undefined, key: string, scalarShorthand: boolean): void {
  const props = parent?.properties;
  const arr = props?.[key];
  if (!props || typeof arr !== 'object' || arr.type !== 'array') return;
  const items = arr.items;
  if (typeof items !== 'object' || Array.isArray(items)) return;
  const body = withoutRequiredName(items);
  const dictValue: J = scalarShorthand
    ? { anyOf: [body, { type: ['string', 'number', 'boolean', 'array', 'null'] }] }
    : body;
  props[key] = {
    ...(arr.description ? { description: arr.description } : {}),
    anyOf: [arr, { type: 'object', additionalProperties: dictValue }],
  };
}

let cached: J | undefined;

export function recipeJsonSchema(): object {
  if (cached) return structuredClone(cached);
  const root = convert(RecipeSchema);
  widen(root, 'variables', true);
  for (const k of ['artifacts', 'backends', 'operators', 'storage']) widen(root, k, false);
  const wf = root.properties?.workflow;
  if (typeof wf === 'object') widen(wf, 'variables', true);
  if (typeof wf === 'object') widen(wf, 'tasks', false);
  cached = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'sflow recipe',
    description: 'An sflow workflow recipe (schema version 0.1).',
    ...root,
  };
  return structuredClone(cached);
}
