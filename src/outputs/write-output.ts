/**
 * Writing what a command was asked to write with `-o` (a schema, a drawing, a composed recipe, a
 * report page): its folder is made, and a place that cannot be written is a usage error naming
 * the path and the reason (choose another -o), never a stack trace.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';
import { ensureDir } from './ensure-dir.js';

/** `data` into `path` (through `<path>.tmp` and a rename when `atomic`); returns the absolute path. */
export function writeOutput(path: string, data: string | Uint8Array, o: { atomic?: boolean } = {}): string {
  const out = resolve(path);
  ensureDir(dirname(out), { what: 'folder for -o', hint: 'choose another -o path' });
  try {
    if (o.atomic) {
      writeFileSync(`${out}.tmp`, data);
      renameSync(`${out}.tmp`, out);
    } else writeFileSync(out, data);
  } catch (e) {
    throw new SflowError('fs.write', `cannot write ${out}: ${errorMessage(e)}`, {
      phase: 'usage',
      hint: 'choose another -o path',
      cause: e,
    });
  }
  return out;
}
