/**
 * The console copy of a task's output: lines split on `\n`, `\r\n` and `\r`, escape
 * sequences removed, each line capped (default 2,000 characters) without ever holding
 * more than the cap in memory, however long the line.
 *
 * Carriage-return redraws (progress bars): within one line, every `\r` ends a *frame* and
 * only the latest frame is shown. At the end of each read (`endOfRead()`) the latest
 * complete frame is emitted, so a long-running progress bar shows up once per read rather
 * than once per redraw, a final frame that ends in `\r` is never lost, and two reads that
 * each end in a redraw are never glued into one line. A `\n` that follows a frame already
 * shown that way (the `\n` of a split `\r\n`) adds no empty line.
 *
 * The task log itself is untouched: this is only what the console (and TUI) show.
 */

import { AnsiStripper } from '../util/ansi.js';
import { Utf8Stream } from '../util/utf8-stream.js';

export const DEFAULT_CONSOLE_LINE_CAP = 2000;

export interface ConsoleLine {
  task: string;
  line: string;
  /** characters cut from the end of the line by the cap (0 when it fit) */
  truncated: number;
}

export interface ConsoleLineOptions {
  /** characters kept per line; the rest is replaced by ` …[+N chars]` */
  maxChars?: number;
  /** remove escape sequences and control characters (default true) */
  stripAnsi?: boolean;
}

/** A frame being built: the first `cap` characters plus a count of the ones dropped. */
class CappedText {
  head = '';
  dropped = 0;
  private full = false;
  constructor(private readonly cap: number) {}

  append(s: string): void {
    if (this.full) {
      this.dropped += s.length;
      return;
    }
    const room = this.cap - this.head.length;
    if (s.length <= room) {
      this.head += s;
      if (s.length === room) this.full = true;
      return;
    }
    let take = room;
    // never cut a surrogate pair in half
    if (take > 0 && isHighSurrogate(s.charCodeAt(take - 1))) take--;
    this.head += s.slice(0, take);
    this.dropped += s.length - take;
    this.full = true;
  }

  get empty(): boolean {
    return this.head.length === 0 && this.dropped === 0;
  }

  take(): { line: string; truncated: number } {
    const line = this.dropped > 0 ? `${this.head} …[+${this.dropped} chars]` : this.head;
    const out = { line, truncated: this.dropped };
    this.head = '';
    this.dropped = 0;
    this.full = false;
    return out;
  }
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

export class ConsoleLineSplitter {
  private readonly decoder = new Utf8Stream();
  private readonly breaks = /[\r\n]/g;
  private readonly ansi: AnsiStripper | undefined;
  private readonly frame: CappedText;
  /** the latest frame completed by `\r` and not shown yet */
  private lastFrame: { line: string; truncated: number } | undefined;
  /** something of the current line was already shown by endOfRead() */
  private lineShown = false;
  /** number of lines emitted so far */
  emitted = 0;

  constructor(
    readonly task: string,
    private readonly onLine: (l: ConsoleLine) => void,
    opts: ConsoleLineOptions = {},
  ) {
    this.frame = new CappedText(Math.max(1, opts.maxChars ?? DEFAULT_CONSOLE_LINE_CAP));
    this.ansi = opts.stripAnsi === false ? undefined : new AnsiStripper();
  }

  /** Raw bytes as the task wrote them; multi-byte characters may be split across calls. */
  pushBytes(chunk: Uint8Array): void {
    this.pushText(this.decoder.write(chunk));
  }

  pushText(raw: string): void {
    const text = this.ansi ? this.ansi.push(raw) : raw;
    let i = 0;
    if (text.indexOf('\r') < 0) {
      // the common case: plain lines, found with the native indexOf
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', i)) {
        if (at > i) this.frame.append(text.slice(i, at));
        this.endLine();
        i = at + 1;
      }
      if (i < text.length) this.frame.append(text.slice(i));
      return;
    }
    const re = this.breaks;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const at = m.index;
      if (at > i) this.frame.append(text.slice(i, at));
      if (text.charCodeAt(at) === 0x0a) this.endLine();
      else this.endFrame();
      i = at + 1;
    }
    if (i < text.length) this.frame.append(text.slice(i));
  }

  /** The reader caught up with the writer: show the latest redraw frame, if any. */
  endOfRead(): void {
    if (this.lastFrame) {
      this.emit(this.lastFrame);
      this.lastFrame = undefined;
      this.lineShown = true;
    }
  }

  /** End of stream: emit whatever is pending, including a final partial line. */
  flush(): void {
    this.pushText(this.decoder.end());
    this.ansi?.reset();
    // the unterminated last frame is the latest one; an older \r frame is superseded
    if (!this.frame.empty) this.emit(this.frame.take());
    else if (this.lastFrame) this.emit(this.lastFrame);
    this.lastFrame = undefined;
    this.lineShown = false;
  }

  private endFrame(): void {
    if (!this.frame.empty) this.lastFrame = this.frame.take();
  }

  private endLine(): void {
    if (!this.frame.empty) this.emit(this.frame.take());
    else if (this.lastFrame) this.emit(this.lastFrame);
    else if (!this.lineShown) this.emit({ line: '', truncated: 0 });
    this.lastFrame = undefined;
    this.lineShown = false;
  }

  private emit(l: { line: string; truncated: number }): void {
    this.emitted++;
    this.onLine({ task: this.task, line: l.line, truncated: l.truncated });
  }
}
