/**
 * A NUL character cannot be passed to a process (argv and environment strings are C strings), so
 * one anywhere in a variable, a script or a task's command is a plan error at its source — before
 * anything is allocated, not a launch failure.
 */
import type { Value } from './expr/index.js';
import { planError, type Where } from './resolve.js';

/** the first string inside `v` (lists and dicts searched) that holds a NUL, or undefined */
function withNul(v: unknown, depth = 0): string | undefined {
  if (typeof v === 'string') return v.includes('\0') ? v : undefined;
  if (depth > 100 || v === null || typeof v !== 'object') return undefined;
  if ('value' in v && !Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype)
    return withNul(v.value, depth + 1); // DomainValue, PyFloat
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    const hit = withNul(x, depth + 1);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

function shown(s: string): string {
  const at = s.indexOf('\0');
  return JSON.stringify(s.slice(Math.max(0, at - 20), at + 20));
}

/** Throws a located plan error when the value (or domain) of variable `name` holds a NUL. */
export function refuseNulInVariable(name: string, value: Value, domain: unknown, where: Where): void {
  const hit = withNul(value) ?? withNul(domain);
  if (hit === undefined) return;
  throw planError(
    { doc: where.doc, path: [...where.path, withNul(value) !== undefined ? 'value' : 'domain'] },
    'plan.nul_character',
    `variable '${name}' contains a NUL character (${shown(hit)}), which no process can receive`,
    'remove the \\0 / \\x00 escape; binary data belongs in a file the task reads',
  );
}

/** Throws a located plan error when the command or environment of task `task` holds a NUL. */
export function refuseNulInTask(
  task: string,
  argv: string[],
  env: Record<string, string>,
  where: Where,
): void {
  // loops, not find(): this runs for every replica of a plan (10,000 of them) and allocates nothing
  let arg: string | undefined;
  for (const a of argv)
    if (a.includes('\0')) {
      arg = a;
      break;
    }
  let key: string | undefined;
  if (arg === undefined)
    for (const k in env)
      if (k.includes('\0') || env[k].includes('\0')) {
        key = k;
        break;
      }
  if (arg === undefined && key === undefined) return;
  const what =
    arg !== undefined ? `its command (${shown(arg)})` : `its environment variable ${JSON.stringify(key)}`;
  throw planError(
    { doc: where.doc, path: [...where.path, arg !== undefined ? 'script' : 'name'] },
    'plan.nul_character',
    `task '${task}': ${what} contains a NUL character, which no process can receive`,
    'remove the \\0 / \\x00 escape from the script, or from the variable it reads',
  );
}
