/** The run verdict (runtime.md 6.8, cli.md 9.9/9.10). */
import type { TaskStatus } from '../events/events.js';

export interface Verdict {
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  exitCode: number;
  message: string;
}

/** 128 + the signal's number, as a shell reports a process ended by it */
const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGQUIT: 131, SIGTERM: 143 };

export function signalExitCode(signal: string | undefined): number | undefined {
  return signal !== undefined && Object.hasOwn(SIGNAL_EXIT, signal) ? SIGNAL_EXIT[signal] : undefined;
}

export function computeVerdict(
  workflow: string,
  statuses: Array<[string, TaskStatus]>,
  signal?: string,
): Verdict {
  const failed = statuses.filter(([, s]) => s === 'FAILED').map(([n]) => n);
  const cancelled = statuses
    .filter(([, s]) => s === 'CANCELLED' || s === 'PENDING' || s === 'SUBMITTED' || s === 'RUNNING')
    .map(([n]) => n);
  const bySignal = signalExitCode(signal);
  if (failed.length > 0) {
    return {
      status: 'FAILED',
      exitCode: bySignal ?? 1,
      message: `Workflow '${workflow}' failed: ${failed.length} task(s) failed (${failed.join(', ')})`,
    };
  }
  if (cancelled.length > 0 || bySignal !== undefined) {
    return {
      status: 'CANCELLED',
      exitCode: bySignal ?? 1,
      message: `Workflow '${workflow}' cancelled: ${cancelled.length} task(s) cancelled (${cancelled.join(', ')})`,
    };
  }
  return { status: 'COMPLETED', exitCode: 0, message: 'Workflow completed' };
}
