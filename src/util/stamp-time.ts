/**
 * Times that scripts on compute nodes and in pods write about themselves (`${EPOCHREALTIME}` of
 * bash 5, `date +%s.%N`, or whole seconds from a `date` without nanoseconds): the Slurm step's
 * start stamp, a merged pod member's start and exit markers.
 */

/** `1796230129.548771` (or `1796230129,548771` in a comma locale, or `1796230129`) → ms; else undefined */
export function stampMs(text: string): number | undefined {
  const m = /^\s*(\d{9,})(?:[.,](\d+))?/.exec(text);
  if (!m) return undefined;
  const frac = m[2] ? Number(`0.${m[2]}`) : 0;
  return Math.round((Number(m[1]) + frac) * 1000);
}
