/**
 * `sflow run -e/--extra-args ARG` (cli.md §9.1): each value is appended to the `extra_args` of
 * every slurm backend of the recipe (so it reaches `salloc`), after the recipe's own, in order. A
 * value that is already in a backend's list as the same option (`--exclusive` twice) is not added
 * again; bare values (`1` in `-G 1`) are always appended, so repeated values survive (0.3.1).
 */
import type { Recipe } from '../../config/schema/index.js';

type Backends = Pick<Recipe, 'backends'>;

function slurmBackends(recipe: Backends) {
  return (recipe.backends ?? []).filter((b) => b.type === 'slurm');
}

/** Mutates the validated recipe; returns a warning per value skipped as a repeat. */
export function applySlurmExtraArgs(recipe: Backends, args: string[]): string[] {
  const warnings: string[] = [];
  if (!args.length) return warnings;
  const backends = slurmBackends(recipe);
  if (!backends.length) {
    warnings.push(
      `-e/--extra-args ${args.join(' ')}: the recipe has no slurm backend; nothing to add them to`,
    );
    return warnings;
  }
  for (const b of backends) {
    const list = [...(b.extra_args ?? [])];
    for (const a of args) {
      if (a.startsWith('-') && list.includes(a)) {
        warnings.push(`-e ${a}: backend '${b.name}' already passes ${a}; not added twice`);
        continue;
      }
      list.push(a);
    }
    b.extra_args = list;
  }
  return warnings;
}

/**
 * `SFLOW_SLURM_GPUS_PER_NODE` (set by scripts of `sflow batch --gpus-per-node`): the GPUs per node
 * every slurm backend plans with inside the job, as the batch dry-run did. Returns a note per change.
 */
export function applySlurmGpusPerNode(recipe: Backends, env: NodeJS.ProcessEnv = process.env): string[] {
  const v = env.SFLOW_SLURM_GPUS_PER_NODE;
  if (!v) return [];
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    return [`SFLOW_SLURM_GPUS_PER_NODE=${v} is not a positive integer: ignored`];
  const notes: string[] = [];
  for (const b of slurmBackends(recipe)) {
    if (b.gpus_per_node !== undefined && String(b.gpus_per_node) !== String(n))
      notes.push(
        `backend '${b.name}': gpus_per_node ${String(b.gpus_per_node)} → ${n} (SFLOW_SLURM_GPUS_PER_NODE, from sflow batch --gpus-per-node)`,
      );
    b.gpus_per_node = n;
  }
  return notes;
}
