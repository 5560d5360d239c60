/** The one "is this path inside that folder" check (result files, inline artifacts, --ssh inputs). */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { relativeInside } from '../../../src/util/path-inside.js';

describe('relativeInside', () => {
  it('gives the relative path inside the folder, and nothing for a path that leaves it', () => {
    const root = '/runs/r1';
    expect(relativeInside(root, root)).toBe('');
    expect(relativeInside(root, join(root, 'a', 'b.json'))).toBe(join('a', 'b.json'));
    expect(relativeInside(root, join(root, '..metrics.json'))).toBe('..metrics.json');
    expect(relativeInside(root, join(root, 'sub', '..x', 'm'))).toBe(join('sub', '..x', 'm'));
    expect(relativeInside(root, '/runs')).toBeUndefined();
    expect(relativeInside(root, '/runs/r10/x')).toBeUndefined();
    expect(relativeInside(root, '/etc/passwd')).toBeUndefined();
  });
});
