import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConsoleLineSplitter, type ConsoleLine } from '../../../src/outputs/console-lines.js';

function collect(opts?: ConstructorParameters<typeof ConsoleLineSplitter>[2]) {
  const got: ConsoleLine[] = [];
  const s = new ConsoleLineSplitter('t', (l) => got.push(l), opts);
  const lines = () => got.map((l) => l.line);
  return { s, got, lines };
}

describe('ConsoleLineSplitter', () => {
  it('splits on \\n, \\r\\n and keeps empty lines and the final partial line', () => {
    const { s, got, lines } = collect();
    s.pushText('a\nb\r\n\nc');
    expect(lines()).toEqual(['a', 'b', '']);
    s.flush();
    expect(lines()).toEqual(['a', 'b', '', 'c']);
    expect(got[0]).toEqual({ task: 't', line: 'a', truncated: 0 });
    expect(s.emitted).toBe(4);
  });

  it('keeps only the final frame of a line redrawn with \\r', () => {
    const { s, lines } = collect();
    s.pushText('10%\r20%\r30%\ndone\n');
    expect(lines()).toEqual(['30%', 'done']);
  });

  it('shows the latest frame once per read and never glues two redraw-terminated reads', () => {
    const { s, lines } = collect();
    s.pushText('10%\r');
    s.endOfRead();
    s.pushText('20%\r30%\r');
    s.endOfRead();
    expect(lines()).toEqual(['10%', '30%']);
    s.pushText('\n'); // the \n of a split \r\n: no empty line
    s.pushText('next\n');
    expect(lines()).toEqual(['10%', '30%', 'next']);
  });

  it('does not emit a read that ended mid-frame twice', () => {
    const { s, lines } = collect();
    s.pushText('a\rb');
    s.endOfRead();
    s.pushText('c\n');
    expect(lines()).toEqual(['a', 'bc']);
  });

  it('keeps a final frame that ends in \\r at end of stream', () => {
    const { s, lines } = collect();
    s.pushText('step 1/3\rstep 3/3\r');
    s.flush();
    expect(lines()).toEqual(['step 3/3']);
  });

  it('treats a CR-only blank line and a blank CRLF line as empty lines', () => {
    const { s, lines } = collect();
    s.pushText('\r\nx\n\r\r\n');
    expect(lines()).toEqual(['', 'x', '']);
  });

  it('strips escape sequences, also when split across pushes', () => {
    const { s, lines } = collect();
    s.pushText('\x1b[1;31mred\x1b[0m plain\n');
    s.pushText('\x1b[3');
    s.pushText('2mgreen\x1b');
    s.pushText('[0m\n');
    s.pushText('\x1b]0;window title\x07after osc\n');
    s.pushText('\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n');
    s.pushText('bell\x07 and\bback\n');
    expect(lines()).toEqual(['red plain', 'green', 'after osc', 'link', 'bell andback']);
  });

  it('keeps escape sequences when asked to', () => {
    const { s, lines } = collect({ stripAnsi: false });
    s.pushText('\x1b[31mred\n');
    expect(lines()).toEqual(['\x1b[31mred']);
  });

  it('caps a long line and reports what it dropped', () => {
    const { s, got } = collect();
    s.pushText('x'.repeat(5000) + '\nshort\n');
    expect(got[0].line).toBe('x'.repeat(2000) + ' …[+3000 chars]');
    expect(got[0].truncated).toBe(3000);
    expect(got[1]).toEqual({ task: 't', line: 'short', truncated: 0 });
  });

  it('caps a line that arrives in many pieces without keeping them', () => {
    const { s, got } = collect({ maxChars: 100 });
    const piece = 'y'.repeat(10_000);
    for (let i = 0; i < 500; i++) s.pushText(piece);
    expect(got).toEqual([]);
    s.flush();
    expect(got).toHaveLength(1);
    expect(got[0].line).toBe('y'.repeat(100) + ` …[+${500 * 10_000 - 100} chars]`);
  });

  it('caps redraw frames too', () => {
    const { s, got } = collect({ maxChars: 5 });
    s.pushText('abcdefgh\rxy\r');
    s.endOfRead();
    s.pushText('123456789\n');
    expect(got.map((l) => l.line)).toEqual(['xy', '12345 …[+4 chars]']);
  });

  it('never cuts a surrogate pair', () => {
    const { s, lines } = collect({ maxChars: 3 });
    s.pushText('😀😀\n');
    expect(lines()).toEqual(['😀 …[+2 chars]']);
  });

  it('decodes UTF-8 split at every byte position', () => {
    const text = 'héllo wörld € 😀 日本語\nzweite Zeile ✓\n';
    const bytes = Buffer.from(text, 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) {
      const { s, lines } = collect();
      s.pushBytes(bytes.subarray(0, cut));
      s.endOfRead();
      s.pushBytes(bytes.subarray(cut));
      s.flush();
      expect(lines()).toEqual(['héllo wörld € 😀 日本語', 'zweite Zeile ✓']);
    }
  });

  it('gives the same lines however the stream is chunked (property)', () => {
    const token = fc.constantFrom('a', 'b', 'é', '\n', '\r', '\r\n', '\x1b[0m', '\x1b]0;t\x07', '😀');
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (tokens, cuts) => {
          const bytes = Buffer.from(tokens.join(''), 'utf8');
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
          const { s, lines } = collect();
          let prev = 0;
          for (const p of [...points, bytes.length]) {
            s.pushBytes(bytes.subarray(prev, p));
            prev = p;
          }
          s.flush();
          expect(lines()).toEqual(reference(tokens.join('')));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** The model: strip escapes, split on \n, each line shows its last non-empty \r frame. */
function reference(text: string): string[] {
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*[A-Za-z]|\x1b\][^\x07]*\x07/g, '');
  const parts = plain.split('\n');
  const last = parts.pop() as string;
  const out = parts.map((l) => l.split('\r').filter(Boolean).at(-1) ?? '');
  const tail = last.split('\r').filter(Boolean).at(-1);
  if (tail !== undefined) out.push(tail);
  return out;
}
