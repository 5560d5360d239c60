/**
 * `workflow.timeout`: a deadline for the whole run, counted from its start (the run's scope,
 * scope.ts, keeps the time and cancels the run). When it passes,
 * every task not finished is cancelled (their process groups stopped as on Ctrl-C), the run
 * ends FAILED with exit code 1, and the verdict, console and summary say that the timeout
 * stopped it.
 */
import { formatDuration } from '../plan/duration.js';
import type { Verdict } from './verdict.js';
import type { TaskStatus } from '../events/events.js';

export class WorkflowDeadline {
  constructor(private readonly seconds: number | null | undefined) {}

  /** how long the run may take (undefined: no deadline); the run's scope keeps the time */
  get ms(): number | undefined {
    return this.seconds && this.seconds > 0 ? this.seconds * 1000 : undefined;
  }

  get label(): string {
    return `workflow.timeout (${formatDuration(this.seconds ?? 0)})`;
  }

  /** the reason every cancelled task gets */
  get cancelReason(): string {
    return `cancelled: ${this.label} reached`;
  }

  /** what the run log says when it fires */
  message(): string {
    return `${this.label} reached: stopping every task that is still running or waiting`;
  }

  /** The run's verdict, saying that the deadline stopped it. */
  verdict(stopped: boolean, workflow: string, v: Verdict, statuses: Array<[string, TaskStatus]>): Verdict {
    if (!stopped) return v;
    // a task that never got to finish (the deadline may pass while the backends allocate) was cancelled too
    const cancelled = statuses
      .filter(([, s]) => s === 'CANCELLED' || s === 'PENDING' || s === 'SUBMITTED' || s === 'RUNNING')
      .map(([n]) => n);
    return {
      status: 'FAILED',
      exitCode: v.exitCode === 0 ? 1 : v.exitCode,
      message: `Workflow '${workflow}' stopped: ${this.label} reached; ${cancelled.length} task(s) cancelled${cancelled.length ? ` (${cancelled.join(', ')})` : ''}`,
    };
  }
}
