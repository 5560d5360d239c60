/**
 * Losing the console never loses the run (issue 24 item 3): the real CLI with its stdout read by
 * `head -1` (EPIPE on the next write), and on a pseudo-terminal that is closed after the first
 * line (EIO and SIGHUP, as a closed window or a dropped ssh session gives), console view and
 * `--tui`. Each run goes on to its normal end: every task ran, the summary says FAILED (task `b`
 * exits 3), `report.html` is written, the exit code is the run's (1), and sflow.log says the
 * console went away.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { onlyRunDir, taskLog, taskTable } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

const RECIPE = `version: "0.1"
workflow:
  name: console-loss
  tasks:
    - name: a
      script:
        - 'for i in 1 2 3 4 5 6; do echo "line $i"; sleep 0.3; done'
    - name: b
      depends_on: [a]
      script:
        - echo b-ran
        - exit 3
`;

/** python3 with the pty module (Debian's python3 has it) */
const python = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;

/** Starts the command on a new pty, reads until the first line, closes the pty, prints `exit N`. */
const PTY_DRIVER = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
seen = b''
while b'\\n' not in seen:
    chunk = os.read(fd, 4096)
    if not chunk:
        break
    seen += chunk
os.close(fd)
_, status = os.waitpid(pid, 0)
print('exit', os.waitstatus_to_exitcode(status), flush=True)
`;

function run(argv: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, NO_COLOR: '1', SFLOW_TASK_OUTPUT: 'always' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** the run went on to its end after the console went away */
function expectNormalEnd(cwd: string, how: RegExp): void {
  const runDir = onlyRunDir(join(cwd, 'sflow_output'));
  const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
  expect(summary).toMatch(/Status +: FAILED/);
  const tasks = taskTable(runDir);
  expect(tasks.a.status).toBe('COMPLETED');
  expect(tasks.b.status).toBe('FAILED');
  expect(taskLog(runDir, 'a')).toContain('line 6');
  expect(taskLog(runDir, 'b')).toContain('b-ran');
  expect(existsSync(join(runDir, 'report.html'))).toBe(true);
  const log = readFileSync(join(runDir, 'sflow.log'), 'utf8');
  expect(log).toMatch(how);
  expect(log).toContain('the run goes on');
  const events = readFileSync(join(runDir, 'events.jsonl'), 'utf8').trim().split('\n');
  expect(JSON.parse(events.at(-1) ?? '{}')).toMatchObject({ type: 'run_finished', exitCode: 1 });
}

describe('losing the console never loses the run', () => {
  it('`sflow run … | head -1`: the run ends normally with its own exit code', async () => {
    const cwd = scratchDir('sflow-console-pipe-');
    writeFileSync(join(cwd, 'dag.yaml'), RECIPE);
    const r = await run(
      [
        'bash',
        '-c',
        `"$0" "$1" run -f dag.yaml | head -1; echo "sflow exit: \${PIPESTATUS[0]}"`,
        process.execPath,
        BIN,
      ],
      cwd,
    );
    expect(r.out).toContain("▶ Workflow 'console-loss'");
    expect(r.out).toContain('sflow exit: 1');
    expectNormalEnd(cwd, /console went away \(stdout: its reader went away \(EPIPE\)\)/);
  }, 120_000);

  it.skipIf(!python)(
    'a closed terminal (pty): the run ends normally, no abort',
    async () => {
      const cwd = scratchDir('sflow-console-pty-');
      writeFileSync(join(cwd, 'dag.yaml'), RECIPE);
      writeFileSync(join(cwd, 'ptydrive.py'), PTY_DRIVER);
      const r = await run(['python3', 'ptydrive.py', process.execPath, BIN, 'run', '-f', 'dag.yaml'], cwd);
      // exit -6 was Node aborting while restoring the hung-up terminal
      expect(r.out.trim()).toBe('exit 1');
      expectNormalEnd(cwd, /console went away \((stdout: |stderr: )?the terminal hung up/);
    },
    120_000,
  );

  it.skipIf(!python)(
    'a closed terminal under --tui: the view leaves at the end, the run ends normally',
    async () => {
      const cwd = scratchDir('sflow-console-tui-');
      writeFileSync(join(cwd, 'dag.yaml'), RECIPE);
      writeFileSync(join(cwd, 'ptydrive.py'), PTY_DRIVER);
      const r = await run(
        ['python3', 'ptydrive.py', process.execPath, BIN, 'run', '--tui', '-f', 'dag.yaml'],
        cwd,
      );
      expect(r.out.trim()).toBe('exit 1');
      expectNormalEnd(cwd, /console went away \((stdout: |stderr: )?the terminal hung up/);
    },
    120_000,
  );
});
