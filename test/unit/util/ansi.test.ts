import { describe, expect, it } from 'vitest';
import { AnsiStripper, escapeControls, stripAnsi } from '../../../src/util/ansi.js';

describe('stripAnsi', () => {
  it('returns plain text unchanged (same string)', () => {
    const s = 'plain text\twith tab\r\nand lines\n';
    expect(stripAnsi(s)).toBe(s);
  });

  it('removes SGR, cursor, charset, OSC and C1 sequences', () => {
    expect(stripAnsi('\x1b[1;32mok\x1b[0m')).toBe('ok');
    expect(stripAnsi('a\x1b[2K\x1b[1Gb')).toBe('ab');
    expect(stripAnsi('\x1b(Bx\x1b7y\x1b8')).toBe('xy');
    expect(stripAnsi('\x1b]0;title\x07t')).toBe('t');
    expect(stripAnsi('\x1b]8;;https://e.x\x1b\\l\x1b]8;;\x1b\\')).toBe('l');
    expect(stripAnsi('\x9b31mc1')).toBe('c1');
    expect(stripAnsi('nul\x00bs\x08del\x7f')).toBe('nulbsdel');
  });

  it('keeps line breaks that interrupt a malformed sequence', () => {
    expect(stripAnsi('\x1b[12\nnext')).toBe('\nnext');
    expect(stripAnsi('\x1b]unterminated\rrest')).toBe('\rrest');
  });

  it('does not let a runaway sequence swallow unbounded text', () => {
    const out = stripAnsi('\x1b[' + '1'.repeat(100) + 'visible');
    expect(out.endsWith('visible')).toBe(true);
  });

  it('carries state across pushes', () => {
    const a = new AnsiStripper();
    expect(a.push('x\x1b')).toBe('x');
    expect(a.push('[3')).toBe('');
    expect(a.push('1my\x1b]0;ti')).toBe('y');
    expect(a.push('tle\x1b')).toBe('');
    expect(a.push('\\z')).toBe('z');
  });
});

describe('escapeControls', () => {
  it('shows every control character as text, leaves plain text as it is', () => {
    expect(escapeControls('run-1 task_a ✓ ü')).toBe('run-1 task_a ✓ ü');
    expect(escapeControls('a\x1b]0;t\x07\x1b[2J\r\n\tb\x00\x7f\x9b')).toBe(
      'a\\x1b]0;t\\x07\\x1b[2J\\r\\n\\tb\\x00\\x7f\\x9b',
    );
  });
});
