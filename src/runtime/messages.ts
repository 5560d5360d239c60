/** Driver messages worth keeping identical everywhere (runtime.md 6.4, cli.md 9.10). */
import type { FailKind } from './task-state.js';
import { errorMessage } from '../util/errors.js';
import { isTransient, type Failure } from '../util/failure.js';

const KIND_TEXT: Record<FailKind, string> = {
  failure_probe: 'failure probe terminated',
  probe_limit: 'probe cannot run (regex time limit)',
  exit: 'process exited with error',
  launch: 'process could not start',
  not_ready_exit: 'service exited before readiness',
  readiness_timeout: 'readiness deadline exceeded',
  assertion: 'result assertion failed',
  upload: 'upload failed',
  lost: 'lost track of the task',
};

const ORDER: FailKind[] = [
  'failure_probe',
  'probe_limit',
  'exit',
  'launch',
  'not_ready_exit',
  'readiness_timeout',
  'assertion',
  'upload',
  'lost',
];

/** `Fail-fast: failure probe terminated: A; process exited with error: B. Cancelling remaining tasks.` */
export function failFastMessage(failed: Array<{ name: string; kind: FailKind }>): string {
  const parts: string[] = [];
  for (const kind of ORDER) {
    const names = failed.filter((f) => f.kind === kind).map((f) => f.name);
    if (names.length > 0) parts.push(`${KIND_TEXT[kind]}: ${names.join(', ')}`);
  }
  return `Fail-fast: ${parts.join('; ')}. Cancelling remaining tasks.`;
}

/** Why a task never started: the backend's error and, when it carries one, its hint. */
/** a launch that threw, as a typed failure: transient ones (ETXTBSY, EAGAIN, 5xx, timeouts) may be retried */
export function launchFailure(e: unknown): Failure<'launch'> {
  return { kind: 'launch', retryable: isTransient(e), reason: launchFailureReason(e), cause: e };
}

export function launchFailureReason(e: unknown): string {
  const hint = e instanceof Error ? (e as { hint?: unknown }).hint : undefined;
  return `could not start: ${errorMessage(e)}${typeof hint === 'string' && hint ? `\n  hint: ${hint}` : ''}`;
}
