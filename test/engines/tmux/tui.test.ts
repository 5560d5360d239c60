/**
 * `sflow run --tui` in a real terminal: tmux (a private server per test file) runs the CLI as a
 * user would, capture-pane reads the screen, send-keys types.
 *
 * - the 5-task DAG sample: every task name and its final state on screen, the clock advanced,
 *   `q` leaves, exit 0, the sflow process is gone;
 * - `q` in the middle of a run: the same clean teardown as Ctrl-C (exit 130), no task process left.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO } from '../../helpers/cli.js';
import { onlyRunDir } from '../../helpers/run-dir.js';

const HAVE_TMUX = spawnSync('tmux', ['-V']).status === 0;
if (!HAVE_TMUX && process.env.SFLOW_REQUIRE_ENGINES === '1')
  throw new Error('tmux is required (SFLOW_REQUIRE_ENGINES=1) but is not installed: apt-get install tmux');

// a private tmux server whose socket lives (and is removed) with this file's scratch folder
const ROOT = mkdtempSync(join(tmpdir(), 'sflow-tmux-'));
const SOCKET = join(ROOT, 'tmux.sock');
const dirs: string[] = [ROOT];
afterAll(() => {
  if (HAVE_TMUX) spawnSync('tmux', ['-S', SOCKET, 'kill-server']);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-S', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });

/**
 * Runs sflow in a new tmux session as the foreground job of a shell that records its exit code
 * in `<cwd>/exit-code` (tmux's own `pane_dead_status` is not always filled in). Returns sflow's pid.
 */
async function start(name: string, cwd: string, args: string[]): Promise<number> {
  const argv = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  tmux('new-session', '-d', '-s', name, '-x', '100', '-y', '30', '-c', cwd, `${argv}; echo $? > exit-code`);
  tmux('set-option', '-t', name, 'remain-on-exit', 'on');
  const shell = paneInfo(name, '#{pane_pid}');
  let pid = 0;
  await waitFor('sflow to start', () => {
    pid = Number(spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.trim().split('\n')[0] || 0);
    return pid > 0;
  });
  return pid;
}

const screen = (name: string) => tmux('capture-pane', '-p', '-t', name);
/** after the process ended: tmux's "Pane is dead" line may have scrolled the first line away */
const withHistory = (name: string) => tmux('capture-pane', '-p', '-S', '-10', '-t', name);
const paneInfo = (name: string, fmt: string) => tmux('display-message', '-p', '-t', name, fmt).trim();

/** sflow's exit code once it has exited (written by the pane's shell) */
const exitCode = (cwd: string): string | undefined => {
  try {
    return readFileSync(join(cwd, 'exit-code'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

/** every process of a group gone (a member still being reaped may linger a moment) */
async function groupGone(pgid: number): Promise<boolean> {
  try {
    await waitFor(`process group ${pgid} to be gone`, () => !alive(-pgid), 5_000);
    return true;
  } catch {
    process.stderr.write(
      spawnSync('ps', ['-o', 'pid,stat,args', '-g', String(pgid)], { encoding: 'utf8' }).stdout,
    );
    return false;
  }
}

async function waitFor(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-tmux-'));
  dirs.push(d);
  return d;
}

const clockOf = (s: string) => /RUNNING {2}(\d\d:\d\d:\d\d) {2}elapsed (\d+:\d\d)/.exec(s);

describe.skipIf(!HAVE_TMUX)('sflow run --tui under tmux', () => {
  it('runs the 5-task DAG sample: every task and its final state on screen, the clock advanced, q leaves cleanly', async () => {
    const cwd = scratch();
    cpSync(join(REPO, 'assets/samples/self_contained/local/dag.yaml'), join(cwd, 'dag.yaml'));
    const pid = await start('dag', cwd, ['run', '-f', 'dag.yaml', '--tui', '-s', 'STEP_SECONDS=1']);
    await waitFor('the live view', () => clockOf(screen('dag')) !== null);
    const first = clockOf(screen('dag'))!;
    await waitFor('the run to end', () => /sflow ▸ dag {2}COMPLETED/.test(screen('dag')));
    const last = screen('dag');
    for (const t of ['fetch', 'tokenize', 'count', 'train', 'report'])
      expect(last, t).toMatch(new RegExp(`✓ COMPLETED +1 +\\d+:\\d\\d +${t}\\b`));
    expect(last).toContain('5 task(s) · 5 completed');
    const end = /COMPLETED {2}(\d\d:\d\d:\d\d) {2}elapsed (\d+):(\d\d)/.exec(last)!;
    expect(end[1]).not.toBe(first[1]);
    expect(Number(end[2]) * 60 + Number(end[3])).toBeGreaterThanOrEqual(4);
    expect(last).toContain('press q to exit');
    expect(last.replace(/\n/g, '')).toContain(`run dir: ${onlyRunDir(join(cwd, 'sflow_output'))}`);

    tmux('send-keys', '-t', 'dag', 'q');
    await waitFor('sflow to exit', () => exitCode(cwd) !== undefined, 15_000);
    expect(exitCode(cwd)).toBe('0');
    expect(alive(pid)).toBe(false);
    const after = withHistory('dag');
    expect(after).toContain('✓ Workflow completed');
    expect(after).not.toContain('press q to exit'); // back on the normal screen
  });

  it('q in the middle of a run stops it like Ctrl-C: exit 130, no task process left', async () => {
    const cwd = scratch();
    writeFileSync(
      join(cwd, 'long.yaml'),
      [
        'version: "0.1"',
        'workflow:',
        '  name: long',
        '  tasks:',
        '    - name: sleeper',
        '      script:',
        '        - echo sleeping',
        '        - sleep 600',
        '    - name: chatter',
        '      script:',
        '        - for i in $(seq 1 3000); do echo "line $i"; sleep 0.1; done',
        '    - name: never',
        '      depends_on: [sleeper]',
        '      script:',
        '        - echo never',
      ].join('\n') + '\n',
    );
    const pid = await start('long', cwd, ['run', '-f', 'long.yaml', '--tui']);
    await waitFor('both tasks running', () => (screen('long').match(/▶ RUNNING/g) ?? []).length === 2);
    // which live task the log pane follows first depends on which launch was recorded last (they
    // start in the same tick); pick chatter explicitly: g = first row (sleeper), j = the next one
    tmux('send-keys', '-t', 'long', 'g');
    tmux('send-keys', '-t', 'long', 'j');
    await waitFor('the chatter log in the pane', () => {
      const s = screen('long');
      return s.includes('log: chatter') && /line \d+/.test(s);
    });
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    const pids = readFileSync(join(runDir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"task_started"'))
      .map((l) => (JSON.parse(l) as { pid?: number }).pid)
      .filter((p): p is number => typeof p === 'number');
    expect(pids).toHaveLength(2);

    tmux('send-keys', '-t', 'long', 'q');
    try {
      await waitFor('sflow to exit', () => exitCode(cwd) !== undefined, 30_000);
    } catch (e) {
      process.stderr.write(`the screen when sflow had not exited:\n${screen('long')}\n`);
      throw e;
    }
    expect(exitCode(cwd)).toBe('130');
    expect(alive(pid)).toBe(false);
    for (const p of pids) {
      expect(alive(p), `task process ${p}`).toBe(false);
      expect(await groupGone(p), `task process group ${p}`).toBe(true);
    }
    expect(withHistory('long')).toContain('Workflow cancelled');
  });
});
