/**
 * Where an attempt's streamed pod logs land: the task's log file. One pod: its bytes exactly as
 * streamed. Several pods (a multi-node task): each line prefixed with `[pod/<name>] ` like
 * `kubectl logs --prefix`, pods interleaved in the order their lines arrive (a line is written
 * once complete; a last line without a newline when its pod's stream ends). A tap sees every
 * complete line of every pod (the output-collect marker).
 */
import { closeSync, openSync, writeSync } from 'node:fs';

export class TaskLogSink {
  private fd: number | undefined;
  private readonly partial = new Map<string, Buffer>();
  private readonly carry = new Map<string, string>();

  constructor(
    readonly path: string,
    private readonly prefixed: boolean,
    private readonly tap?: (pod: string, line: string) => void,
  ) {}

  write(pod: string, chunk: Buffer): void {
    if (this.tap) this.lines(pod, chunk.toString('utf8'));
    if (!this.prefixed) return this.raw(chunk);
    let buf = Buffer.concat([this.partial.get(pod) ?? Buffer.alloc(0), chunk]);
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      this.raw(Buffer.concat([Buffer.from(`[pod/${pod}] `), buf.subarray(0, nl + 1)]));
      buf = buf.subarray(nl + 1);
    }
    this.partial.set(pod, buf);
  }

  /** the pod's stream ended: its last partial line goes out as it is */
  end(pod: string): void {
    const rest = this.partial.get(pod);
    if (rest && rest.length) this.raw(Buffer.concat([Buffer.from(`[pod/${pod}] `), rest]));
    this.partial.delete(pod);
    const tail = this.carry.get(pod);
    if (tail && this.tap) this.tap(pod, tail);
    this.carry.delete(pod);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private lines(pod: string, text: string): void {
    const all = (this.carry.get(pod) ?? '') + text;
    const parts = all.split('\n');
    this.carry.set(pod, (parts.pop() ?? '').slice(-4096));
    for (const l of parts) this.tap!(pod, l);
  }

  private raw(b: Buffer): void {
    this.fd ??= openSync(this.path, 'a');
    writeSync(this.fd, b);
  }
}
