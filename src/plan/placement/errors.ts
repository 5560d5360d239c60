/** Plan-time placement errors: every one is an SflowError in phase 'plan'. */
import { SflowError } from '../../config/errors.js';

export function placementError(code: string, message: string, hint?: string): SflowError {
  return new SflowError(`PLACEMENT_${code}`, message, { phase: 'plan', hint });
}

/** `[2, 3]` → `2,3` */
export function list(values: readonly number[]): string {
  return values.join(',');
}

export function quoteList(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(', ');
}
