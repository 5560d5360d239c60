/**
 * Upload globs (src/uploads/glob.ts) beyond the common cases of upload-keys.test.ts: the set
 * syntax `[…]` as the shell reads it (negation, a `]` first in the set, a backslash, an unclosed
 * `[`), the folder a pattern names, and files reached through links that point out of it.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandFrom, fromRoot, uploadSources } from '../../../src/uploads/glob.js';
import { scratchDir } from '../../helpers/scratch.js';

describe('sets in a glob segment', () => {
  const dir = scratchDir('sflow-glob-set-');
  for (const f of ['a.json', 'b.json', '!.json', '].json', 'x\\y.txt', 'xy.txt', '[q.txt', 'q.txt'])
    writeFileSync(join(dir, f), f);
  const names = (pattern: string) => expandFrom(pattern, dir).map((p) => p.slice(dir.length + 1));

  it('[!…] matches any one character outside the set, `!` included', () => {
    expect(names('[!a].json')).toEqual(['!.json', '].json', 'b.json']);
    expect(names('[!!ab].json')).toEqual(['].json']);
  });

  it('a `]` right after `[` (or `[!`) belongs to the set', () => {
    expect(names('[]a].json')).toEqual(['].json', 'a.json']);
    expect(names('[!]a].json')).toEqual(['!.json', 'b.json']);
  });

  it('a backslash in a set is a literal backslash', () => {
    expect(names('x[\\]y.txt')).toEqual(['x\\y.txt']);
  });

  it('an unclosed `[` is a literal `[`', () => {
    expect(names('[q*')).toEqual(['[q.txt']);
  });
});

describe('the folder a pattern names', () => {
  it('is the part before the first glob segment, or a plain path’s folder', () => {
    expect(fromRoot('/data/run/*.json')).toBe('/data/run');
    expect(fromRoot('/data/**/x.json')).toBe('/data');
    expect(fromRoot('/data/run/a.json')).toBe('/data/run');
    expect(fromRoot('/*/a.json')).toBe('/');
  });
});

describe('links that leave the folder', () => {
  const root = scratchDir('sflow-glob-links-');
  const out = join(root, 'elsewhere');
  const task = join(root, 'task');
  mkdirSync(out);
  mkdirSync(join(task, 'sub'), { recursive: true });
  writeFileSync(join(out, 'secret.txt'), 's');
  writeFileSync(join(task, 'own.txt'), 'o');
  writeFileSync(join(task, 'sub', 'deep.txt'), 'd');
  symlinkSync(join(out, 'secret.txt'), join(task, 'leak.txt'));
  symlinkSync(join(task, 'own.txt'), join(task, 'sub', 'alias.txt'));

  it('are followed by default', () => {
    expect(expandFrom(join(task, '**', '*.txt'), '/')).toEqual(
      ['leak.txt', 'own.txt', 'sub/alias.txt', 'sub/deep.txt'].map((f) => join(task, f)),
    );
  });

  it('with followSymlinks: false are left out and listed; links inside the folder are kept', () => {
    const outside: string[] = [];
    expect(expandFrom(join(task, '**', '*.txt'), '/', { followSymlinks: false, outside })).toEqual(
      ['own.txt', 'sub/alias.txt', 'sub/deep.txt'].map((f) => join(task, f)),
    );
    expect(outside).toEqual([join(task, 'leak.txt')]);
    // a plain path: its own folder is the bound
    const plain: string[] = [];
    expect(expandFrom('leak.txt', task, { followSymlinks: false, outside: plain })).toEqual([]);
    expect(plain).toEqual([join(task, 'leak.txt')]);
    expect(expandFrom('own.txt', task, { followSymlinks: false })).toEqual([join(task, 'own.txt')]);
  });

  it('a pattern under a folder that does not exist matches nothing', () => {
    expect(expandFrom(join(root, 'nope', '*.txt'), '/', { followSymlinks: false })).toEqual([]);
    expect(expandFrom(join(root, 'nope', 'a.txt'), '/', { followSymlinks: false })).toEqual([]);
  });
});

describe('a folder as an upload source', () => {
  const root = scratchDir('sflow-glob-folder-');
  const out = join(root, 'elsewhere');
  const dir = join(root, 'results');
  mkdirSync(out);
  mkdirSync(join(dir, 'm', 'z'), { recursive: true });
  writeFileSync(join(out, 'secret.txt'), 's');
  // written out of order: the result is sorted by name
  for (const f of ['zz.txt', 'm/z/2.txt', 'b.txt', 'm/1.txt', 'a.txt', 'Q.txt'])
    writeFileSync(join(dir, f), f);
  symlinkSync(join(dir, 'a.txt'), join(dir, 'm', 'near.txt')); // a link to a file inside
  symlinkSync(join(out, 'secret.txt'), join(dir, 'far.txt')); // a link to a file outside
  symlinkSync(out, join(dir, 'folder-link')); // a link to a folder: never walked
  const all = ['Q.txt', 'a.txt', 'b.txt', 'm/1.txt', 'm/near.txt', 'm/z/2.txt', 'zz.txt'];

  it('gives every file below it, named by its relative path, sorted; links to files followed', () => {
    const r = uploadSources('results', root);
    expect(r.folder).toBe(true);
    expect(r.files.map((f) => f.name)).toEqual([...all, 'far.txt'].sort());
    expect(r.files.find((f) => f.name === 'm/z/2.txt')?.path).toBe(join(dir, 'm', 'z', '2.txt'));
  });

  it('with followSymlinks: false keeps links inside the folder and lists the others', () => {
    const outside: string[] = [];
    const r = uploadSources(dir, '/', { followSymlinks: false, outside });
    expect(r.files.map((f) => f.name)).toEqual(all);
    expect(outside).toEqual([join(dir, 'far.txt')]);
  });

  it('a glob or a file is not a folder', () => {
    expect(uploadSources('results/*.txt', root)).toEqual({
      files: ['Q.txt', 'a.txt', 'b.txt', 'far.txt', 'zz.txt'].map((f) => ({ path: join(dir, f), name: f })),
      folder: false,
    });
    expect(uploadSources('results/m/1.txt', root).files).toEqual([
      { path: join(dir, 'm', '1.txt'), name: '1.txt' },
    ]);
  });
});

// readdir gives names in strcmp order (libuv sorts them), and a walk goes depth first: a folder `m`
// is walked before its sibling file `m.txt`, though `m.txt` sorts before `m/…` ('.' < '/'); and a
// `**` takes the files of a folder before those of its subfolders. Only a final sort orders both.
describe('the order of what a walk finds', () => {
  const root = scratchDir('sflow-glob-order-');
  mkdirSync(join(root, 'm', 'in', 'deep'), { recursive: true });
  for (const f of ['m/1.txt', 'm.txt', 'z.txt', 'm/in/2.txt', 'm/in/deep/3.txt'])
    writeFileSync(join(root, f), f);

  it('a folder’s files are sorted by their relative name', () => {
    expect(uploadSources(root, '/').files.map((f) => f.name)).toEqual([
      'm.txt',
      'm/1.txt',
      'm/in/2.txt',
      'm/in/deep/3.txt',
      'z.txt',
    ]);
  });

  it('the matches of a `**` are sorted by path', () => {
    expect(expandFrom('**/*.txt', root).map((p) => p.slice(root.length + 1))).toEqual([
      'm.txt',
      'm/1.txt',
      'm/in/2.txt',
      'm/in/deep/3.txt',
      'z.txt',
    ]);
  });

  it('a literal segment after a glob segment is looked up in each match', () => {
    expect(expandFrom('*/in/2.txt', root)).toEqual([join(root, 'm', 'in', '2.txt')]);
    expect(expandFrom('m/*/deep/*.txt', root)).toEqual([join(root, 'm', 'in', 'deep', '3.txt')]);
  });
});
