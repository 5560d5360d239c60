/**
 * `events.jsonl`: every event of the run, one JSON object per line, written synchronously so
 * the ledger survives a crash, and each line whole or not at all (util/whole-line.ts). Task output is never an event (the task log holds it).
 */
import { closeSync, openSync } from 'node:fs';
import type { RunEvent, RunEventSink } from '../events/events.js';
import { appendWholeLine } from '../util/whole-line.js';

export class EventsJsonlSink implements RunEventSink {
  readonly name = 'events.jsonl';
  private fd: number | undefined;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  emit(e: RunEvent): void {
    if (this.fd === undefined) return;
    appendWholeLine(this.fd, JSON.stringify(e)); // whole or not at all (a disk filling mid-line)
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Reads a ledger back (for reports, resume and tests). */
export function parseEventsJsonl(text: string): RunEvent[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
}
