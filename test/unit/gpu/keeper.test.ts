import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isKeeper, keeperOf, liveHolder, ownerAlive } from '../../../src/gpu/keeper.js';
import { processStartTime } from '../../../src/util/process-liveness.js';

/** a pid that is certainly not running: a child that has exited and been reaped */
async function deadPid(): Promise<number> {
  const c = spawn('true');
  await new Promise((r) => c.once('exit', r));
  return c.pid ?? 0;
}

describe('GPU record keeper', () => {
  it('a record lives while its driver or its keeper runs, with the PID-reuse guard', async () => {
    const dead = await deadPid();
    const me = { pid: process.pid, startTime: processStartTime(process.pid) };
    expect(liveHolder({ pid: process.pid, pidStartTime: me.startTime })).toBe(process.pid);
    expect(ownerAlive({ pid: dead, pidStartTime: null })).toBe(false);
    expect(liveHolder({ pid: dead, pidStartTime: null, keeper: me })).toBe(process.pid);
    expect(ownerAlive({ pid: dead, pidStartTime: null, keeper: { pid: dead, startTime: null } })).toBe(false);
    if (me.startTime !== null) {
      // same pid, another start time: a reused pid does not keep the record
      const reused = { pid: process.pid, startTime: me.startTime + 1 };
      expect(ownerAlive({ pid: dead, pidStartTime: null, keeper: reused })).toBe(false);
    }
    // a malformed keeper (a hand-written record) is ignored
    const bogus = { pid: -1, startTime: null };
    expect(ownerAlive({ pid: dead, pidStartTime: null, keeper: bogus })).toBe(false);
    expect(isKeeper({ pid: 1.5, startTime: null })).toBe(false);
    expect(keeperOf(undefined)).toBeUndefined();
    expect(keeperOf(process.pid)).toEqual(me);
  });
});
