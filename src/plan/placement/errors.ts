/** Plan-time placement errors: every one is an SflowError in phase 'plan' that names its task and field. */
import { SflowError } from '../../util/sflow-error.js';

/**
 * A placement error and what it is about: the concrete task and the `resources` field at fault
 * (`gpus`, `gpus.indices`, `nodes.count`, …; absent when the whole request is). The plan builder
 * locates it in the recipe from these, never from the message text.
 */
export class PlacementError extends SflowError {
  constructor(
    code: string,
    message: string,
    hint: string | undefined,
    readonly task: string | undefined,
    readonly field: string | undefined,
  ) {
    super(`PLACEMENT_${code}`, message, { phase: 'plan', hint });
  }
}

export function placementError(
  code: string,
  message: string,
  hint?: string,
  at: { task?: string; field?: string } = {},
): PlacementError {
  return new PlacementError(code, message, hint, at.task, at.field);
}

/** `[2, 3]` → `2,3` */
export function list(values: readonly number[]): string {
  return values.join(',');
}

export function quoteList(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(', ');
}
