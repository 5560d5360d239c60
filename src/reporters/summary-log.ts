/**
 * `sflow_summary.log` as an event consumer: written when the run starts, refreshed at most
 * every `refreshMs` while it runs (so probe traces are live and a killed driver still leaves
 * a recent one), and written for the last time when the sink is closed — on every path.
 */
import { writeFileSync } from 'node:fs';
import type { RunEvent, RunEventSink } from '../events/events.js';
import { SummaryModel } from './summary-model.js';
import { renderSummary, type RuntimeInfo } from './summary-render.js';

export class SummaryLogSink implements RunEventSink {
  readonly name = 'sflow_summary.log';
  readonly model = new SummaryModel();
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private closed = false;

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
        if (this.dirty && !this.closed) this.write();
      }, this.opts.refreshMs ?? 2_000);
      this.timer.unref();
    }
  }

  write(): void {
    this.dirty = false;
    try {
      writeFileSync(
        this.path,
        renderSummary(this.model, { summaryPath: this.path, runtime: this.opts.runtime }),
      );
    } catch {
      // the run directory vanished: nothing sensible to do
    }
  }

  /** the summary as it stands now (the run archive of `upload_all` carries it) */
  checkpoint(): void {
    if (!this.closed) this.write();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.write();
    this.closed = true;
  }
}
