/**
 * Legacy `outputs:` (config.md 5.11, v0.2): "parse"-style templates matched against whole
 * log lines, written to `<task dir>/outputs.json` as
 * `{"outputs": {...}, "specs": [{pattern, source}], "task": name}`.
 *
 * Template fields: `{name}` any text, `{name:d}` integer, `{name:f}` float with a decimal
 * point, `{name:w}` word characters, `{name:w*}` possibly empty word; `{{`/`}}` are literal
 * braces. The first template matching a line contributes its fields; a field matched once
 * is a scalar, several times a list in log order.
 */
import { resolve } from 'node:path';
import type { PlannedOutputSpec, PlannedTask } from '../plan/types.js';
import { forEachLine } from './line-reader.js';
import { PyFloat, writeJsonAtomic, toPlain } from './json-write.js';
import { errorMessage } from '../util/errors.js';

type Conv = (s: string) => unknown;
interface Template {
  re: RegExp;
  fields: Array<{ name: string; conv: Conv }>;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const FORMATS: Record<string, { re: string; conv: Conv }> = {
  '': { re: '.+?', conv: (s) => s },
  d: { re: '[-+]?\\d+', conv: (s) => Number(s) },
  f: { re: '[-+]?\\d*\\.\\d+', conv: (s) => new PyFloat(Number(s)) },
  w: { re: '\\w+', conv: (s) => s },
  'w*': { re: '\\w*', conv: (s) => s },
};

/** Compiles a template; unknown format specs are treated as `{name}` (any text). */
export function compileTemplate(pattern: string): Template {
  let re = '^';
  const fields: Template['fields'] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '{' && pattern[i + 1] === '{') {
      re += '\\{';
      i += 2;
    } else if (c === '}' && pattern[i + 1] === '}') {
      re += '\\}';
      i += 2;
    } else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end < 0) {
        re += escapeRe(pattern.slice(i));
        break;
      }
      const body = pattern.slice(i + 1, end);
      const colon = body.indexOf(':');
      const name = colon < 0 ? body : body.slice(0, colon);
      const spec = colon < 0 ? '' : body.slice(colon + 1);
      const fmt = FORMATS[spec] ?? FORMATS[''];
      re += `(${fmt.re})`;
      fields.push({ name, conv: fmt.conv });
      i = end + 1;
    } else {
      re += escapeRe(c);
      i++;
    }
  }
  return { re: new RegExp(re + '$'), fields };
}

const PREFIX = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - \S+ - [A-Z]+ - /;

export async function parseLegacyOutputs(
  specs: PlannedOutputSpec[],
  logPath: string,
): Promise<Record<string, unknown>> {
  const templates = specs.map((s) => compileTemplate(s.pattern));
  const found = new Map<string, unknown[]>();
  await forEachLine(logPath, (raw) => {
    const line = raw.replace(PREFIX, '');
    for (const t of templates) {
      const m = t.re.exec(line);
      if (!m) continue;
      t.fields.forEach((f, k) => {
        if (!f.name) return; // anonymous field: matched, not recorded
        const list = found.get(f.name) ?? [];
        list.push(f.conv(m[k + 1]));
        found.set(f.name, list);
      });
      break;
    }
  });
  const out: Record<string, unknown> = {};
  for (const [k, v] of found) out[k] = v.length === 1 ? v[0] : v;
  return out;
}

/** Parses the task log and writes outputs.json; a missing log / parse problem yields `{}`. */
export async function writeLegacyOutputs(
  task: PlannedTask,
): Promise<{ outputs: Record<string, unknown>; warning?: string }> {
  const specs = task.outputs ?? [];
  let outputs: Record<string, unknown> = {};
  let warning: string | undefined;
  try {
    outputs = await parseLegacyOutputs(specs, task.logPath);
  } catch (e) {
    warning = `Task '${task.name}': could not parse outputs: ${errorMessage(e)}`;
  }
  const doc = {
    outputs,
    specs: specs.map((s) => ({ pattern: s.pattern, source: s.source })),
    task: task.name,
  };
  try {
    await writeJsonAtomic(resolve(task.outputDir, 'outputs.json'), doc);
  } catch (e) {
    warning = `Task '${task.name}': could not write outputs.json: ${errorMessage(e)}`;
  }
  return { outputs: toPlain(outputs) as Record<string, unknown>, warning };
}
