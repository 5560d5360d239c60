/**
 * Typed user errors, on the ground floor (every layer may throw one). Anything thrown as an
 * SflowError is the user's to fix and is printed without a stack trace: `file:line:col`, what was
 * expected, a hint, and the process exit code. Anything else is a bug.
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
