/**
 * `sflow_summary.log` as an event consumer: written when the run starts, refreshed at most
 * every `refreshMs` while it runs (so probe traces are live and a killed driver still leaves
 * a recent one), and written for the last time when the sink is closed — on every path. Each write
 * replaces the file whole (a temporary file renamed over it), so a failed write (a full disk)
 * leaves the previous summary intact; the failure is thrown to the event bus, which reports it.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { RunEvent, RunEventSink } from '../events/events.js';
import { SummaryModel } from './summary-model.js';
import { renderSummary, type RuntimeInfo } from './summary-render.js';

export class SummaryLogSink implements RunEventSink {
  readonly name = 'sflow_summary.log';
  readonly model = new SummaryModel();
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private closed = false;
  /** a failed write of the refresh timer, thrown on the next event (the bus reports it) */
  private failure: Error | undefined;

  constructor(
    readonly path: string,
    private readonly opts: { refreshMs?: number; runtime?: RuntimeInfo } = {},
  ) {}

  emit(e: RunEvent): void {
    if (this.closed) return;
    this.model.apply(e);
    this.dirty = true;
    if (e.type === 'run_plan' || e.type === 'run_finished') this.write();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.dirty || this.closed) return;
        try {
          this.write();
        } catch (err) {
          this.failure ??= err instanceof Error ? err : new Error(String(err));
        }
      }, this.opts.refreshMs ?? 2_000);
      this.timer.unref();
    }
    this.throwFailure();
  }

  write(): void {
    this.dirty = false;
    const tmp = `${this.path}.tmp`;
    try {
      writeFileSync(tmp, renderSummary(this.model, { summaryPath: this.path, runtime: this.opts.runtime }));
      renameSync(tmp, this.path);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  private throwFailure(): void {
    const f = this.failure;
    this.failure = undefined;
    if (f) throw f;
  }

  /** the summary as it stands now (the run archive of `upload_all` carries it) */
  checkpoint(): void {
    if (!this.closed) this.write(); // a failure reaches the bus, which reports it
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.closed = true;
    this.write();
  }
}
