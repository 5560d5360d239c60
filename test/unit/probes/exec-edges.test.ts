/**
 * The exec probe check at its edges (src/probes/kinds/exec.ts): the detail line trimmed and cut at
 * 200 characters, no output at all, a check asked after its loop stopped, the check's own name,
 * and the temporary output folder removed after every check. Complements exec.test.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { execCheck, runExecCheck } from '../../../src/probes/kinds/exec.js';
import type { ProbeTask } from '../../../src/probes/kind.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-exec-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

let n = 0;
function task(): ProbeTask {
  const outputDir = join(dir, `task${++n}`);
  mkdirSync(outputDir);
  return { name: 'srv', env: {}, outputDir };
}
const signal = () => new AbortController().signal;

describe('exec check edges', () => {
  it('trims the last line, and cuts one longer than 200 characters', async () => {
    expect(await runExecCheck("echo '   spaced out   '", task(), signal(), 10_000)).toEqual({
      ok: true,
      detail: 'exit 0: spaced out',
    });
    const long = 'abcdefghij'.repeat(25);
    expect(await runExecCheck(`echo ${long}; exit 1`, task(), signal(), 10_000)).toEqual({
      ok: false,
      detail: `exit 1: ${long.slice(0, 200)}…`,
    });
    const exact = 'abcdefghij'.repeat(20);
    expect((await runExecCheck(`echo ${exact}`, task(), signal(), 10_000)).detail).toBe(`exit 0: ${exact}`);
  });

  it('says only the status when the command printed nothing', async () => {
    expect(await runExecCheck('exit 4', task(), signal(), 10_000)).toEqual({ ok: false, detail: 'exit 4' });
  });

  it('does not start the command once its loop has stopped', async () => {
    const ac = new AbortController();
    ac.abort();
    const t = task();
    expect(await runExecCheck('touch ran', t, ac.signal, 10_000)).toEqual({
      ok: false,
      detail: 'not checked (aborted)',
    });
    expect(readdirSync(t.outputDir)).toEqual([]);
  });

  it('is named exec with its command', () => {
    const c = execCheck('curl -sf localhost:8000/health', task());
    expect(c.kind).toBe('exec');
    expect(c.describe()).toBe('exec "curl -sf localhost:8000/health"');
  });

  it('removes its temporary output folder after each check', async () => {
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    process.env.TMPDIR = tmp;
    await runExecCheck('echo one', task(), signal(), 10_000);
    await runExecCheck('mkdir -p sub && echo two; exit 2', task(), signal(), 10_000);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
