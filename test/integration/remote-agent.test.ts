/**
 * The remote end of --ssh, run here without ssh (`sflow remote-agent …` of the built CLI): a detached
 * start that survives its caller, follow until the end, stop with no process left, and pack's tar.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-agent-'));
const sessions: string[] = [];
afterAll(() => {
  // a test that failed half-way may have left a run going: stop it before removing its folder
  for (const s of sessions) sflow(['remote-agent', 'stop', s], { timeoutMs: 60_000 });
  rmSync(root, { recursive: true, force: true });
}, 120_000);

function session(name: string, script: string[]): string {
  const s = join(root, name);
  sessions.push(s);
  mkdirSync(join(s, 'inputs'), { recursive: true });
  const steps = script.map((l) => `        - ${JSON.stringify(l)}`).join('\n');
  writeFileSync(
    join(s, 'inputs', 'recipe.yaml'),
    `version: '0.1'\nworkflow:\n  name: ${name}\n  tasks:\n    - name: t\n      script:\n${steps}\n`,
  );
  return s;
}

const runArgs = (s: string) => [
  'run', '-f', join(s, 'inputs', 'recipe.yaml'), '--workspace-dir', join(s, 'inputs', 'workspace'), '--output-dir', join(s, 'output'),
]; // prettier-ignore

const procs = (marker: string) =>
  spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);

async function until<T>(what: string, f: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('sflow remote-agent (the remote end of --ssh)', () => {
  it('start returns at once, the run goes on detached; follow streams it to its end line', () => {
    const s = session('done', ['echo hello-from-task', 'sleep 1']);
    const start = sflow(['remote-agent', 'start', s, '--', ...runArgs(s)]);
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toMatch(/^started supervisor=\d+/);
    const f = sflow(['remote-agent', 'follow', s, '--mode', 'stream', '--interval', '1']);
    expect(f.code).toBe(0);
    expect(f.stdout).toMatch(/\[t\] hello-from-task/);
    expect(f.stdout).toMatch(/✓ Workflow completed/);
    expect(f.stdout.trim().split('\n').pop()).toBe('@@sflow-remote-end code=0 state=completed@@');
    expect(JSON.parse(readFileSync(join(s, 'state', 'exit.json'), 'utf8'))).toMatchObject({
      code: 0,
      state: 'completed',
    });
    // a second start of the same session is refused
    expect(sflow(['remote-agent', 'start', s, '--', ...runArgs(s)]).code).toBe(1);
    // pack: the logs set as tar, paths relative to output/
    const tar = spawnSync(process.execPath, ['bin/sflow.js', 'remote-agent', 'pack', s, '--mode', 'logs'], {
      maxBuffer: 1 << 26,
    });
    const list = execFileSync('tar', ['-tf', '-'], { input: tar.stdout, encoding: 'utf8' }).split('\n');
    expect(list).toContain('controller.log');
    expect(list.some((l) => /^done-[^/]+\/t\/t\.log$/.test(l))).toBe(true);
    expect(list.some((l) => /\/sflow_summary\.log$/.test(l))).toBe(true);
  }, 120_000);

  it('snapshot shows the newest logs; stop interrupts the controller and leaves no process', async () => {
    const marker = `sleep 29${process.pid % 10000}`.padEnd(11, '7');
    const s = session('stopme', ['echo waiting-here', marker]);
    expect(sflow(['remote-agent', 'start', s, '--', ...runArgs(s)]).code).toBe(0);
    await until('the task', () => procs(marker).length > 0 || undefined);
    const snap = await until('the task log in a snapshot', () => {
      const r = sflow(['remote-agent', 'snapshot', s]);
      // the task's line, in its own log or (with SFLOW_TASK_OUTPUT=always) in controller.log
      return /==> [^\n]+ <==\n[\s\S]*waiting-here/.test(r.stdout) ? r.stdout : undefined;
    });
    expect(snap).toMatch(/^\[ssh \d\d:\d\d:\d\d\]/);
    const stop = sflow(['remote-agent', 'stop', s]);
    expect(stop.stdout.trim()).toBe('@@sflow-remote-end code=130 state=cancelled@@');
    expect(stop.stderr).toMatch(/sent SIGINT to the remote controller/);
    await until('no task process', () => procs(marker).length === 0 || undefined, 15_000);
    // stopping again just reports the outcome
    expect(sflow(['remote-agent', 'stop', s]).stdout.trim()).toBe(
      '@@sflow-remote-end code=130 state=cancelled@@',
    );
  }, 120_000);

  it('refuses a relative session and an unknown request', () => {
    expect(sflow(['remote-agent', 'follow', 'rel/dir']).code).toBe(2);
    expect(sflow(['remote-agent', 'dance', root]).stderr).toMatch(/unknown request/);
  });
});
