/**
 * The one event stream of a run: stamps each event with its time and hands it to every sink.
 * A sink that throws never stops the run or the other sinks.
 */
import type { RunEvent, RunEventInput, RunEventSink } from './events.js';

export class EventBus {
  private readonly sinks: RunEventSink[] = [];
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
        if (this.errors.length < 20)
          this.errors.push(`${s.constructor?.name ?? 'sink'}: ${(err as Error).message}`);
      }
    }
  }

  async close(): Promise<void> {
    for (const s of this.sinks) {
      try {
        await s.close?.();
      } catch (err) {
        if (this.errors.length < 20)
          this.errors.push(`${s.constructor?.name ?? 'sink'} close: ${(err as Error).message}`);
      }
    }
  }
}
