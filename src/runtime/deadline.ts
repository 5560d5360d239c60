/**
 * `workflow.timeout`: a deadline for the whole run, counted from its start. When it passes,
 * every task not finished is cancelled (their process groups stopped as on Ctrl-C), the run
 * ends FAILED with exit code 1, and the verdict, console and summary say that the timeout
 * stopped it.
 */
import { formatDuration } from '../plan/duration.js';
import type { Verdict } from './verdict.js';
import type { TaskStatus } from '../events/events.js';

/** setTimeout's longest delay; longer deadlines are reached in steps */
const MAX_DELAY_MS = 2_147_483_647;

export class WorkflowDeadline {
  private timer: NodeJS.Timeout | undefined;
  private firedAt: number | undefined;
  private readonly startedAt = Date.now();

  constructor(private readonly seconds: number | null | undefined) {}

  get label(): string {
    return `workflow.timeout (${formatDuration(this.seconds ?? 0)})`;
  }

  /** the reason every cancelled task gets */
  get cancelReason(): string {
    return `cancelled: ${this.label} reached`;
  }

  /** Calls `onExpire` when the deadline passes; `onExpire` says whether it stopped the run. */
  arm(onExpire: () => boolean): void {
    if (!this.seconds || this.seconds <= 0) return;
    const end = this.startedAt + this.seconds * 1000;
    const step = () => {
      const left = end - Date.now();
      if (left > 0) {
        this.timer = setTimeout(step, Math.min(left, MAX_DELAY_MS));
        return;
      }
      this.timer = undefined;
      if (onExpire()) this.firedAt = Date.now();
    };
    step();
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  get fired(): boolean {
    return this.firedAt !== undefined;
  }

  /** what the run log says when it fires */
  message(): string {
    return `${this.label} reached: stopping every task that is still running or waiting`;
  }

  /** The run's verdict, saying that the deadline stopped it. */
  verdict(workflow: string, v: Verdict, statuses: Array<[string, TaskStatus]>): Verdict {
    if (!this.fired) return v;
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
