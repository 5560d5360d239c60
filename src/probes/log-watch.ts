/**
 * log_watch: met when the watched task's log holds at least `match_count` matches of the
 * pattern (literal substring, or a regex after `re:`/`regex:`; see pattern.ts).
 *
 * Incremental: each check reads only the bytes appended since the previous one, in bounded
 * chunks, so a failure probe on a 1 GB log never re-reads it. Matching happens on the text
 * as a terminal shows it: UTF-8 decoded across chunk boundaries and with escape sequences
 * (colours) removed, as v0.2 did when it wrote its log. Matches are counted like Python's
 * `findall` (non-overlapping):
 *  - literal: anywhere in the text stream, also across chunk boundaries (a carry of the
 *    last `pattern.length - 1` characters);
 *  - regex: line by line (lines end at `\n`, `\r\n` or `\r`), so `^` and `$` anchor at
 *    line ends and matches never span lines. The unterminated last line is carried (and
 *    checked, uncommitted, at every check); a line longer than 1 MiB is matched in 1 MiB
 *    pieces.
 * If the log shrinks (a retry truncated it), counting starts over from the beginning.
 *
 * Regexes run under a deadline (util/guarded-regex.ts): a pattern that backtracks
 * catastrophically is stopped, the check reports it, and the probe fails at its own deadline.
 */

import { open } from 'node:fs/promises';
import { AnsiStripper } from '../util/ansi.js';
import { Utf8Stream } from '../util/utf8-stream.js';
import { countLineMatches, RegexTimeoutError } from '../util/guarded-regex.js';
import { compilePattern, type CompiledPattern } from './pattern.js';
import type { CheckResult, ProbeCheck } from './types.js';
import { errorCode } from '../util/errors.js';

export const LINE_CARRY_CAP = 1024 * 1024;
const SHOWN_LINE_CHARS = 200;

function shorten(line: string): string {
  const l = line.replace(/\s+$/, '');
  return l.length > SHOWN_LINE_CHARS ? l.slice(0, SHOWN_LINE_CHARS) + '…' : l;
}

/** The line of `s` around [at, at+len), bounded on both sides. */
function lineAround(s: string, at: number, len: number): string {
  let start = s.lastIndexOf('\n', at) + 1;
  start = Math.max(start, s.lastIndexOf('\r', at) + 1, at - SHOWN_LINE_CHARS);
  let end = s.indexOf('\n', at + len);
  if (end < 0) end = s.length;
  end = Math.min(end, at + len + SHOWN_LINE_CHARS);
  return shorten(s.slice(start, end));
}

/** Streaming match counter over raw log bytes. */
export class LogMatcher {
  /** committed matches (the carried unterminated line is not included: see current()) */
  count = 0;
  lastMatchLine: string | undefined;
  /** set when the regex ran out of time: matching has stopped for good */
  failure: string | undefined;
  private decoder = new Utf8Stream();
  private ansi = new AnsiStripper();
  private carry = '';
  private skipLF = false;
  private readonly anyLine: RegExp | undefined;

  constructor(
    readonly pattern: CompiledPattern,
    private readonly lineCap = LINE_CARRY_CAP,
  ) {
    // a cheap negative test over a whole block of lines before testing line by line
    if (pattern.kind === 'regex')
      this.anyLine = new RegExp(pattern.re.source, pattern.re.flags.replace('g', '') + 'm');
  }

  feed(chunk: Uint8Array): void {
    if (this.failure) return;
    this.feedText(this.ansi.push(this.decoder.write(chunk)));
  }

  /** Matches so far, including the unterminated last line. */
  current(): { count: number; lastMatchLine: string | undefined } {
    if (this.pattern.kind === 'regex' && this.carry && !this.failure) {
      const r = this.guarded(this.carry, true);
      if (r.count > 0) return { count: this.count + r.count, lastMatchLine: shorten(this.carry) };
    }
    return { count: this.count, lastMatchLine: this.lastMatchLine };
  }

  feedText(text: string): void {
    if (text.length === 0 || this.failure) return;
    if (this.pattern.kind === 'literal') this.feedLiteral(this.pattern.text, text);
    else this.feedLines(text);
  }

  private feedLiteral(pat: string, text: string): void {
    if (pat.length === 0) return;
    const s = this.carry + text;
    let end = 0;
    let last = -1;
    for (let i = s.indexOf(pat); i >= 0; i = s.indexOf(pat, end)) {
      this.count++;
      last = i;
      end = i + pat.length;
    }
    if (last >= 0) this.lastMatchLine = lineAround(s, last, pat.length);
    this.carry = s.slice(Math.max(end, s.length - (pat.length - 1)));
  }

  private feedLines(input: string): void {
    let text = input;
    if (this.skipLF) {
      this.skipLF = false;
      if (text.charCodeAt(0) === 0x0a) text = text.slice(1);
    }
    const lastBreak = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    if (lastBreak >= 0) {
      const block = this.carry + text.slice(0, lastBreak + 1);
      this.carry = '';
      this.commit(this.guarded(block, false));
      // a \r ending the text may be half of a \r\n
      if (lastBreak === text.length - 1 && text.charCodeAt(lastBreak) === 0x0d) this.skipLF = true;
      text = text.slice(lastBreak + 1);
    }
    this.carry += text;
    if (this.carry.length > this.lineCap) {
      this.commit(this.guarded(this.carry, true));
      this.carry = '';
    }
  }

  private commit(r: { count: number; lastLine: string | undefined }): void {
    if (r.count > 0) {
      this.count += r.count;
      this.lastMatchLine = shorten(r.lastLine ?? '');
    }
  }

  /** per-line matches of the regex in `text`, under a deadline; none once it ran out of time */
  private guarded(text: string, lastIsLine: boolean): { count: number; lastLine: string | undefined } {
    if (this.failure) return { count: 0, lastLine: undefined };
    try {
      return countLineMatches(this.anyLine, (this.pattern as { re: RegExp }).re, text, lastIsLine);
    } catch (e) {
      if (!(e instanceof RegexTimeoutError)) throw e;
      this.failure = e.message;
      this.carry = '';
      return { count: 0, lastLine: undefined };
    }
  }
}

export interface LogWatchOptions {
  /** the watched log file */
  path: string;
  /** literal text, or a regex after `re:` / `regex:` */
  pattern: string;
  /** matches needed (default 1; values below 1 count as 1) */
  matchCount?: number;
  /** name of the watched task when it is not the probed task itself (for messages) */
  logTask?: string;
  /** byte offset to start counting from (default 0: the whole log) */
  startOffset?: number;
  chunkBytes?: number;
}

export class LogWatchCheck implements ProbeCheck {
  readonly kind = 'log_watch' as const;
  readonly required: number;
  private matcher: LogMatcher;
  private offset: number;
  private busy: Promise<unknown> = Promise.resolve();
  private readonly compiled: CompiledPattern;

  constructor(private readonly o: LogWatchOptions) {
    this.compiled = compilePattern(o.pattern);
    this.matcher = new LogMatcher(this.compiled);
    this.required = Math.max(1, Math.floor(o.matchCount ?? 1));
    this.offset = o.startOffset ?? 0;
  }

  describe(): string {
    return `log_watch ${JSON.stringify(this.o.pattern)}${this.o.logTask ? ` in ${this.o.logTask}` : ''}`;
  }

  /** bytes of the log consumed so far */
  get consumed(): number {
    return this.offset;
  }

  check(signal: AbortSignal): Promise<CheckResult> {
    // checks on one object never overlap (a loop check and a final check may race)
    const run = this.busy.then(() => this.checkNow(signal));
    this.busy = run.catch(() => undefined);
    return run;
  }

  /** the pattern ran out of time: this check can never run again */
  private limited(): CheckResult {
    const detail = `pattern ${this.o.pattern}: ${this.matcher.failure}`;
    return { ok: false, detail, limit: detail };
  }

  private async checkNow(signal: AbortSignal): Promise<CheckResult> {
    if (this.matcher.failure) return this.limited();
    if (this.compiled.kind === 'literal' && this.compiled.text === '')
      return { ok: true, detail: 'empty pattern' };
    let fh;
    try {
      fh = await open(this.o.path, 'r');
    } catch (e) {
      const code = errorCode(e);
      return {
        ok: false,
        detail: code === 'ENOENT' ? `log not created yet (${this.o.path})` : `cannot read log: ${code}`,
      };
    }
    try {
      const { size } = await fh.stat();
      if (size < this.offset) {
        this.matcher = new LogMatcher(this.compiled);
        this.offset = 0;
      }
      const chunk = Math.max(4096, this.o.chunkBytes ?? 256 * 1024);
      const buf = Buffer.allocUnsafe(chunk);
      while (!signal.aborted) {
        const { bytesRead } = await fh.read(buf, 0, chunk, this.offset);
        if (bytesRead === 0) break;
        this.matcher.feed(buf.subarray(0, bytesRead));
        this.offset += bytesRead;
        if (bytesRead < chunk) break;
      }
    } finally {
      await fh.close().catch(() => undefined);
    }
    if (this.matcher.failure) return this.limited();
    const { count, lastMatchLine } = this.matcher.current();
    const seen = `${count}/${this.required} matches`;
    return {
      ok: count >= this.required,
      detail: lastMatchLine === undefined ? seen : `${seen}; last: ${lastMatchLine}`,
    };
  }
}

export function logWatchCheck(o: LogWatchOptions): LogWatchCheck {
  return new LogWatchCheck(o);
}
