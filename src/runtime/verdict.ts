/** The run verdict (runtime.md 6.8, cli.md 9.9/9.10). */
import type { TaskStatus } from '../events/events.js';

export interface Verdict {
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  exitCode: number;
  message: string;
}

export function signalExitCode(signal: string | undefined): number | undefined {
  if (signal === 'SIGINT') return 130;
  if (signal === 'SIGTERM') return 143;
  return undefined;
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
