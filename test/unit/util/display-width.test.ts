/** Table columns line up by display width: a CJK character takes two terminal columns. */
import { describe, expect, it } from 'vitest';
import { table } from '../../../src/reporters/format.js';
import { displayWidth, padEndDisplay } from '../../../src/util/display-width.js';

describe('displayWidth', () => {
  it('counts wide characters twice and combining marks not at all', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('推理服务')).toBe(8);
    expect(displayWidth('서버')).toBe(4);
    expect(displayWidth('ｓｆｌｏｗ')).toBe(10);
    expect(displayWidth('é')).toBe(1);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('🚀x')).toBe(3);
    expect(padEndDisplay('推理', 6)).toBe('推理  ');
  });
});

describe('summary tables', () => {
  it('align the next column after CJK task names', () => {
    const rows = table([
      ['TASK', 'STATUS'],
      ['推理服务', 'COMPLETED'],
      ['bench', 'FAILED'],
    ]);
    const col = (line: string) => displayWidth(line.slice(0, line.search(/(COMPLETED|FAILED|STATUS)/)));
    expect(rows.map(col)).toEqual([10, 10, 10]);
  });
});
