import { describe, expect, it } from 'vitest';
import { lineDiff } from '../../../src/util/line-diff.js';

describe('lineDiff', () => {
  it('nothing for equal texts', () => {
    expect(lineDiff('a\nb', 'a\nb')).toEqual([]);
  });

  it('a changed line: old then new, two lines of context; touching hunks merge', () => {
    const a = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n');
    const b = ['1', '2', '3', '4', 'five', '6', '7', '8', '9', '10'].join('\n');
    expect(lineDiff(a, b)).toEqual([
      '@@ line 3 → 3 @@',
      '  3',
      '  4',
      '- 5',
      '+ five',
      '  6',
      '  7',
      '  8',
      '  9',
      '+ 10',
    ]);
  });

  it('removed lines, and a cap on the output', () => {
    expect(lineDiff('a\nb\nc', 'a\nc')).toEqual(['@@ line 1 → 1 @@', '  a', '- b', '  c']);
    const many = lineDiff(Array.from({ length: 300 }, (_, i) => `x${i}`).join('\n'), '', { maxLines: 10 });
    expect(many).toHaveLength(11);
    expect(many[10]).toMatch(/^… \d+ more diff line\(s\)$/);
  });
});

describe('lineDiff hunks', () => {
  it('changes far apart are separate hunks with their own line numbers', () => {
    const a = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
    const b = [...a];
    b[1] = 'two';
    b.splice(15, 1);
    expect(lineDiff(a.join('\n'), b.join('\n'))).toEqual([
      '@@ line 1 → 1 @@',
      '  l1',
      '- l2',
      '+ two',
      '  l3',
      '  l4',
      '@@ line 14 → 14 @@',
      '  l14',
      '  l15',
      '- l16',
      '  l17',
      '  l18',
    ]);
  });
});
