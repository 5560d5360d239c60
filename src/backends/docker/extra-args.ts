/**
 * `sflow run --extra-docker-args ARG` (backends.md §3.1, the `extra_args` row): each value is merged
 * into the `extra_args` of every docker backend of the recipe, per option, the CLI winning. In an
 * `extra_args` list every element that does not start with `-` is the value of the option before
 * it (`--shm-size 8g`), and `--name=value` carries its own. A CLI option that docker takes once
 * (`--shm-size`, `--ipc`, `--user`, …) replaces the recipe's occurrences of that option; a
 * repeatable one (`-v`, `-e`, `--device`, `--cap-add`, …) is added unless the very same option and
 * value is already there. Pool hosts' own `extra_args` are left as they are (they are per host).
 */
import type { Recipe } from '../../config/schema/index.js';

/** options docker accepts several times, each adding one more (docker run --help) */
const REPEATABLE = new Set([
  '-v', '--volume', '-e', '--env', '--env-file', '--mount', '--device', '--device-cgroup-rule',
  '--add-host', '-l', '--label', '--label-file', '--ulimit', '--cap-add', '--cap-drop',
  '--security-opt', '--tmpfs', '-p', '--publish', '--expose', '--dns', '--dns-option',
  '--dns-search', '--group-add', '--sysctl', '--link', '--volumes-from', '--storage-opt',
  '--attach', '-a', '--gpus', '--network-alias', '--annotation',
]); // prettier-ignore

interface Opt {
  name: string;
  /** the elements as written: `['--shm-size=8g']` or `['--shm-size', '8g']` */
  parts: string[];
  value: string | undefined;
}

/** an extra_args list as options (a leading bare value stands alone) */
export function parseDockerArgs(list: string[]): Opt[] {
  const out: Opt[] = [];
  for (const a of list) {
    const last = out.at(-1);
    if (!a.startsWith('-') && last && last.value === undefined && last.name.startsWith('-')) {
      last.parts.push(a);
      last.value = a;
      continue;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    out.push(
      eq > 0
        ? { name: a.slice(0, eq), parts: [a], value: a.slice(eq + 1) }
        : { name: a, parts: [a], value: undefined },
    );
  }
  return out;
}

/** the recipe's options with the CLI's merged in; a note per replaced or repeated option */
export function mergeDockerArgs(recipe: string[], cli: string[]): { args: string[]; notes: string[] } {
  let opts = parseDockerArgs(recipe);
  const notes: string[] = [];
  for (const o of parseDockerArgs(cli)) {
    const same = opts.filter((x) => x.name === o.name);
    const single = !REPEATABLE.has(o.name) && o.name.startsWith('-');
    if (same.some((x) => x.value === o.value) && (!single || same.length === 1)) {
      notes.push(`${o.parts.join(' ')} is already there; not added twice`);
      continue;
    }
    if (single && same.length) {
      notes.push(`${o.parts.join(' ')} replaces ${same.map((x) => x.parts.join(' ')).join(', ')}`);
      opts = opts.filter((x) => x.name !== o.name);
    }
    opts.push(o);
  }
  return { args: opts.flatMap((o) => o.parts), notes };
}

/** Mutates the validated recipe; returns one line per change worth saying (or a warning). */
export function applyDockerExtraArgs(recipe: Pick<Recipe, 'backends'>, args: string[]): string[] {
  if (!args.length) return [];
  const backends = (recipe.backends ?? []).filter((b) => b.type === 'docker');
  if (!backends.length)
    return [
      `--extra-docker-args ${args.join(' ')}: the recipe has no docker backend; nothing to add them to`,
    ];
  const lines: string[] = [];
  for (const b of backends) {
    const own = b.extra_args ?? [];
    const { args: merged, notes } = mergeDockerArgs(own, args);
    b.extra_args = merged;
    for (const n of notes) lines.push(`--extra-docker-args: backend '${b.name}': ${n}`);
  }
  return lines;
}
