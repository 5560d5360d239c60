/**
 * "Did you mean" hints for names the user mistyped. The error type itself lives on the ground
 * floor (src/util/sflow-error.ts) and is re-exported here for callers that import both.
 */
export {
  SflowError,
  isSflowError,
  formatLocation,
  formatSflowError,
  type SourceLocation,
  type ErrorPhase,
  type ErrorDetail,
} from '../util/sflow-error.js';

/** Levenshtein distance, small and allocation-light; used for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** `did you mean 'x'?` for the closest candidate within a sensible distance, else undefined. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(2, Math.floor(word.length / 3));
  return bestD <= limit ? `did you mean '${best}'?` : undefined;
}
