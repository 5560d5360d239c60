/** `sflow schema`: the JSON Schema generated from the same zod schema that validates recipes. */
import { recipeJsonSchema } from '../config/schema/index.js';
import { writeOutput } from '../outputs/write-output.js';
import { reportError } from './errors.js';

export async function schemaCommand(opts: Record<string, unknown>): Promise<number> {
  try {
    const text = JSON.stringify(recipeJsonSchema(), null, 2) + '\n';
    // `-o -`: stdout, as without -o
    if (typeof opts.output === 'string' && opts.output !== '-') {
      writeOutput(opts.output, text);
      process.stderr.write(`✓ Saved to ${opts.output}\n`);
    } else process.stdout.write(text);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}
