/** `sflow compose`: merge recipe fragments into one plain recipe (optionally with variables inlined). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadRecipe } from '../config/load.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { isPlainObject } from '../config/collections.js';
import { inputFiles, loadOptions } from './common.js';
import { reportError } from './errors.js';
import { formatLocation } from '../config/errors.js';

type Obj = Record<string, any>;

/** Plain data for output: nulls removed, `match_pattern` written as `regex_pattern`. */
function clean(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clean);
  if (isPlainObject(v)) {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null || x === undefined) continue;
      out[k === 'match_pattern' ? 'regex_pattern' : k] = clean(x);
    }
    return out;
  }
  return v;
}

export function composeText(doc: Obj): string {
  const ordered: Obj = { version: '0.1' };
  for (const [k, v] of Object.entries(clean(doc) as Obj)) if (k !== 'version') ordered[k] = v;
  const parts = Object.entries(ordered).map(([k, v]) =>
    stringify({ [k]: v }, { blockQuote: 'literal', lineWidth: 0, defaultStringType: 'PLAIN', defaultKeyType: 'PLAIN' }),
  );
  // a blank line between tasks
  return parts.join('\n').replace(/(?<!tasks:)\n( {4}- name: )/g, '\n\n$1').replace(/version: "0\.1"/, "version: '0.1'");
}

export async function composeCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const files = inputFiles(positional, opts);
    if (files.length === 0) {
      process.stderr.write('Error: no input files provided\n');
      return 1;
    }
    const loaded = loadRecipe(loadOptions(files, opts));
    for (const w of loaded.warnings) {
      const at = formatLocation(w.location);
      process.stderr.write(`  compose ${w.message.startsWith('merge: ') ? 'override: ' + w.message.slice(7) : 'warning: ' + w.message}${at ? ` (${at})` : ''}\n`);
    }
    const doc = opts.resolve ? resolveComposed(clean(loaded.doc) as Obj) : (loaded.doc);
    const text = composeText(doc);
    if (typeof opts.output === 'string') {
      const out = resolve(opts.output);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, text);
      process.stdout.write(`Composed ${files.length} files -> ${out}\n`);
    } else process.stdout.write(text);
    return 0;
  } catch (e) {
    return reportError(e, 'Composed configuration validation failed');
  }
}
