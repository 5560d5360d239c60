/**
 * The one event stream of a run: stamps each event with its time and hands it to every sink.
 * A sink that throws never stops the run or the other sinks: its first failure is announced to
 * the others as a `sink_failed` event (the console shows it, the summary records it) and kept in
 * `errors`; later failures of the same sink are counted silently.
 */
import type { RunEvent, RunEventInput, RunEventSink } from './events.js';
import { errorMessage } from '../util/errors.js';

function sinkName(s: RunEventSink): string {
  return s.name ?? s.constructor?.name ?? 'sink';
}

export class EventBus {
  private readonly sinks: RunEventSink[] = [];
  private readonly failed = new Map<RunEventSink, number>();
  readonly errors: string[] = [];

  add(sink: RunEventSink): this {
    this.sinks.push(sink);
    return this;
  }

  emit(e: RunEventInput & { t?: number }): void {
    const ev: RunEvent = { t: Date.now(), ...e };
    for (const s of this.sinks) {
      try {
        s.emit(ev);
      } catch (err) {
        this.fail(s, errorMessage(err));
      }
    }
  }

  /** Failures per sink (0 for healthy sinks). */
  failures(sink: RunEventSink): number {
    return this.failed.get(sink) ?? 0;
  }

  private fail(sink: RunEventSink, message: string): void {
    const n = (this.failed.get(sink) ?? 0) + 1;
    this.failed.set(sink, n);
    if (n > 1) return;
    const name = sinkName(sink);
    const path = typeof sink.path === 'string' ? sink.path : undefined;
    this.errors.push(`${path ?? name}: ${message}`);
    this.emit({ type: 'sink_failed', sink: name, message, ...(path ? { path } : {}) });
  }

  /** Every sink writes what it holds to its file now (a failure is reported like any other). */
  checkpoint(): void {
    for (const s of this.sinks) {
      try {
        s.checkpoint?.();
      } catch (err) {
        this.fail(s, `checkpoint: ${errorMessage(err)}`);
      }
    }
  }

  async close(): Promise<void> {
    for (const s of this.sinks) {
      try {
        await s.close?.();
      } catch (err) {
        this.fail(s, `close: ${errorMessage(err)}`);
      }
    }
  }
}
