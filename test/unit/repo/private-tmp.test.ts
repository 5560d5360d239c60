/**
 * The sweep of test runs' private temp folders (test/helpers/private-tmp.ts): the folder of a run
 * whose process is gone is removed; a live run's, an unnamed recent one and other folders stay.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepStaleRuns } from '../../helpers/private-tmp.js';
import { scratchDir } from '../../helpers/scratch.js';

describe('sweepStaleRuns', () => {
  it("removes the folders of runs that are gone and keeps live runs' and others'", () => {
    const parent = scratchDir('sflow-sweep-');
    // a pid that surely ended: a child that has exited and been reaped
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const dead = join(parent, `sflow-tests-${gone}-abcdef`);
    const live = join(parent, `sflow-tests-${process.pid}-ghijkl`);
    const oldUnnamed = join(parent, 'sflow-tests-mnopqr');
    const newUnnamed = join(parent, 'sflow-tests-stuvwx');
    const other = join(parent, 'sflow-other-123-abcdef');
    for (const d of [dead, live, oldUnnamed, newUnnamed, other]) {
      mkdirSync(d);
      writeFileSync(join(d, 'left'), 'x');
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(oldUnnamed, twoHoursAgo, twoHoursAgo);
    const removed = sweepStaleRuns(parent).sort();
    expect(removed).toEqual([dead, oldUnnamed].sort());
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(oldUnnamed)).toBe(false);
    for (const d of [live, newUnnamed, other]) expect(existsSync(d), d).toBe(true);
  });
});
