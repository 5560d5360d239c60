/**
 * Typed user errors. Anything thrown as an SflowError is the user's to fix and is printed
 * without a stack trace: `file:line:col`, what was expected, and a hint. Anything else is a bug.
 */

export interface SourceLocation {
  file: string;
  /** 1-based */
  line: number;
  /** 1-based */
  col: number;
}

/** `limitation`: valid input this version of sflow does not run yet (not the user's mistake) */
export type ErrorPhase = 'usage' | 'load' | 'preflight' | 'plan' | 'run' | 'limitation';

export interface ErrorDetail {
  message: string;
  location?: SourceLocation;
  /** dotted path inside the document, e.g. `workflow.tasks[0].script` */
  path?: string;
  hint?: string;
}

export class SflowError extends Error {
  readonly code: string;
  readonly phase: ErrorPhase;
  readonly location?: SourceLocation;
  readonly hint?: string;
  /** further problems reported together with this one (e.g. every schema issue) */
  readonly details: ErrorDetail[];
  /** process exit code the CLI uses for this error */
  readonly exitCode: number;

  constructor(
    code: string,
    message: string,
    opts: {
      phase?: ErrorPhase;
      location?: SourceLocation;
      hint?: string;
      details?: ErrorDetail[];
      exitCode?: number;
      /** the error this one explains (kept for debugging; never printed to the user) */
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SflowError';
    this.code = code;
    this.phase = opts.phase ?? 'load';
    this.location = opts.location;
    this.hint = opts.hint;
    this.details = opts.details ?? [];
    this.exitCode = opts.exitCode ?? (opts.phase === 'usage' ? 2 : 1);
  }
}

export function isSflowError(e: unknown): e is SflowError {
  return e instanceof SflowError;
}

export function formatLocation(loc: SourceLocation | undefined): string {
  return loc ? `${loc.file}:${loc.line}:${loc.col}` : '';
}

/** Human-readable, multi-line rendering used by the CLI (never includes a stack). */
export function formatSflowError(e: SflowError): string {
  const lines: string[] = [];
  const where = formatLocation(e.location);
  lines.push(where ? `${where}: ${e.message}` : e.message);
  for (const d of e.details) {
    const dw = formatLocation(d.location);
    const head = [dw, d.path].filter(Boolean).join(' ');
    lines.push(`  - ${head ? head + ': ' : ''}${d.message}`);
    if (d.hint) lines.push(`    hint: ${d.hint}`);
  }
  if (e.hint) lines.push(`  hint: ${e.hint}`);
  return lines.join('\n');
}

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
