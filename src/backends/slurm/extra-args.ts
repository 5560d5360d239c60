/**
 * `sflow run -e/--extra-args ARG` (cli.md §9.1): each value is appended to the `extra_args` of
 * every slurm backend of the recipe (so it reaches `salloc`), after the recipe's own, in order. A
 * value that is already in a backend's list as the same option (`--exclusive` twice) is not added
 * again; bare values (`1` in `-G 1`) are always appended, so repeated values survive (0.3.1).
 */
type Obj = Record<string, unknown>;

/** Mutates the validated recipe; returns a warning per value skipped as a repeat. */
export function applySlurmExtraArgs(recipe: Obj, args: string[]): string[] {
  const warnings: string[] = [];
  if (!args.length) return warnings;
  const backends = ((recipe.backends as Obj[] | undefined) ?? []).filter((b) => b?.type === 'slurm');
  if (!backends.length) {
    warnings.push(
      `-e/--extra-args ${args.join(' ')}: the recipe has no slurm backend; nothing to add them to`,
    );
    return warnings;
  }
  for (const b of backends) {
    const list = Array.isArray(b.extra_args) ? [...(b.extra_args as unknown[])] : [];
    for (const a of args) {
      if (a.startsWith('-') && list.includes(a)) {
        warnings.push(`-e ${a}: backend '${String(b.name)}' already passes ${a}; not added twice`);
        continue;
      }
      list.push(a);
    }
    b.extra_args = list;
  }
  return warnings;
}
