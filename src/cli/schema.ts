/** `sflow schema`: the JSON Schema generated from the same zod schema that validates recipes. */
import { writeFileSync } from 'node:fs';
import { recipeJsonSchema } from '../config/schema/index.js';

export async function schemaCommand(opts: Record<string, unknown>): Promise<number> {
  const text = JSON.stringify(recipeJsonSchema(), null, 2) + '\n';
  if (typeof opts.output === 'string') {
    writeFileSync(opts.output, text);
    process.stderr.write(`✓ Saved to ${opts.output}\n`);
  } else process.stdout.write(text);
  return 0;
}
