/**
 * Failures as typed values (issue 26): what failed (`kind`), whether trying again may help
 * (`retryable`), the line a person reads (`reason`) and the error behind it (`cause`). Retry logic
 * reads `retryable`; it never parses an error's text.
 */
import { errorCode } from './errors.js';

export interface Failure<K extends string = string> {
  kind: K;
  retryable: boolean;
  reason: string;
  cause: unknown;
}

/**
 * errno codes of a call that may work when made again: a program file still open for writing
 * (ETXTBSY), no process slot or memory for the moment (EAGAIN), a busy device (EBUSY), a connection
 * reset or timed out (ECONNRESET, ETIMEDOUT).
 */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ETXTBSY',
  'EAGAIN',
  'EBUSY',
  'ECONNRESET',
  'ETIMEDOUT',
]);

function field(e: unknown, name: string): unknown {
  if (typeof e !== 'object' || e === null) return undefined;
  const v: unknown = Reflect.get(e, name);
  return v;
}

/**
 * Whether an error is transient, from what it carries, through its `cause` chain: an explicit
 * boolean `retryable` (a backend that knows says so, and wins); an errno code of TRANSIENT_CODES;
 * an HTTP status 5xx (`statusCode`, or a numeric `code` as the Kubernetes client's errors carry);
 * a `TimeoutError` (AbortSignal.timeout).
 */
export function isTransient(e: unknown): boolean {
  for (
    let at = e, depth = 0;
    at !== undefined && at !== null && depth < 5;
    at = field(at, 'cause'), depth++
  ) {
    const flagged = field(at, 'retryable');
    if (typeof flagged === 'boolean') return flagged;
    const code = errorCode(at);
    if (code !== undefined && TRANSIENT_CODES.has(code)) return true;
    const status = field(at, 'statusCode') ?? field(at, 'code');
    if (typeof status === 'number' && status >= 500 && status < 600) return true;
    if (field(at, 'name') === 'TimeoutError') return true;
  }
  return false;
}
