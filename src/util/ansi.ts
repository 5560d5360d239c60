/**
 * Streaming removal of terminal escape sequences (colours, cursor moves, titles, hyperlinks)
 * and stray control characters. State carries across push() calls, so a sequence split
 * between two reads is still removed. `\t`, `\n` and `\r` are kept: line handling is the
 * caller's business. A malformed sequence never swallows a line: a newline or carriage
 * return ends it, and so does a length cap.
 */

const S = {
  Text: 0,
  Esc: 1, // after ESC
  Csi: 2, // ESC [ ... final byte
  Str: 3, // OSC / DCS / SOS / PM / APC body, until BEL or ESC \
  StrEsc: 4, // ESC inside a string: expecting '\'
  Inter: 5, // ESC + intermediate bytes (e.g. ESC ( B), until a final byte
} as const;
type State = (typeof S)[keyof typeof S];

// Characters that need attention in plain text: C0 controls except \t \n \r, DEL, C1.
// eslint-disable-next-line no-control-regex -- control characters are what this module removes
const SPECIAL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;
const MAX_CSI = 64;
const MAX_STR = 4096;

export class AnsiStripper {
  private state: State = S.Text;
  private seqLen = 0;

  /** Returns `text` with escape sequences and control characters removed. */
  push(text: string): string {
    if (this.state === S.Text) {
      SPECIAL.lastIndex = 0;
      if (!SPECIAL.test(text)) return text; // the common case: nothing to strip
    }
    let out = '';
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.state === S.Text) {
        SPECIAL.lastIndex = i;
        const m = SPECIAL.exec(text);
        const stop = m ? m.index : n;
        if (stop > i) out += text.slice(i, stop);
        if (!m) break;
        const c = text.charCodeAt(stop);
        i = stop + 1;
        this.seqLen = 0;
        if (c === 0x1b) this.state = S.Esc;
        else if (c === 0x9b) this.state = S.Csi;
        else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) this.state = S.Str;
        // any other control character is dropped
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === 0x0a || c === 0x0d) {
        // a line break always ends a (malformed) sequence and is kept
        this.state = S.Text;
        continue;
      }
      i++;
      this.seqLen++;
      switch (this.state) {
        case S.Esc:
          if (c === 0x5b)
            this.state = S.Csi; // [
          else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f)
            this.state = S.Str; // ] P X ^ _
          else if (c >= 0x20 && c <= 0x2f) this.state = S.Inter;
          else this.state = S.Text; // two-character sequence (ESC 7, ESC M, ESC =, ...)
          break;
        case S.Csi:
          if (c >= 0x40 && c <= 0x7e) this.state = S.Text;
          else if (this.seqLen > MAX_CSI) this.state = S.Text;
          break;
        case S.Inter:
          if (c >= 0x30 && c <= 0x7e) this.state = S.Text;
          else if (this.seqLen > MAX_CSI) this.state = S.Text;
          break;
        case S.Str:
          if (c === 0x07 || c === 0x9c) this.state = S.Text;
          else if (c === 0x1b) this.state = S.StrEsc;
          else if (this.seqLen > MAX_STR) this.state = S.Text;
          break;
        case S.StrEsc:
          // ESC \ ends the string; anything else: treat the ESC as starting a new sequence
          if (c === 0x5c) this.state = S.Text;
          else {
            this.state = S.Esc;
            i--;
            this.seqLen = 0;
          }
          break;
      }
    }
    return out;
  }

  /** Forget any half-read sequence (end of stream). */
  reset(): void {
    this.state = S.Text;
    this.seqLen = 0;
  }
}

/** One-shot strip of a complete string. */
export function stripAnsi(text: string): string {
  return new AnsiStripper().push(text);
}

// eslint-disable-next-line no-control-regex -- control characters are what this escapes
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

/**
 * Text from someone else (another user's registry record, a run folder's ledger, a task's output)
 * made safe to print on a terminal: every control character — escape sequences, `\r`, `\n`, BEL,
 * C1 — becomes a visible `\xNN` (`\n`, `\r`, `\t` as such), so it can neither move the cursor,
 * set the title, clear the screen, nor start a line of its own. Plain text is returned as it is.
 */
export function escapeControls(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}
